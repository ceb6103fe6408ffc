package acl

import (
	"fmt"
	"strings"
)

// ResourceType is what a resource names (Java's ResourceType).
type ResourceType uint8

// Resource types. AnyType is a rule's "*" (every resource of every type).
const (
	AnyType ResourceType = iota + 1
	Cluster
	Namespace
	Topic
	Group
)

var typeNames = map[ResourceType]string{AnyType: "Any", Cluster: "Cluster", Namespace: "Namespace", Topic: "Topic", Group: "Group"}

// Pattern is how a resource's name matches.
type Pattern uint8

// Patterns (Java ResourcePattern), in the order a match prefers them.
const (
	Literal Pattern = iota + 1
	Prefixed
	AnyName
)

// Resource is a rule's resource, or what a request needs: a topic, a
// consumer group (never its retry topic: see GroupNeed), a cluster.
type Resource struct {
	Type    ResourceType
	Name    string // the name, or prefix; "" for AnyName
	Pattern Pattern
}

// ParseResource reads Java's resource key: "*" (anything), "Type:*" (every
// one of a type), "Type:prefix*", "Type:name". The type is matched without
// regard to case.
func ParseResource(key string) (Resource, error) {
	key = strings.TrimSpace(key)
	if key == "*" {
		return Resource{Type: AnyType, Pattern: AnyName}, nil
	}
	typ, name, ok := strings.Cut(key, ":")
	if !ok {
		return Resource{}, fmt.Errorf("resource %q: want Type:name", key)
	}
	var rt ResourceType
	for t, n := range typeNames {
		if strings.EqualFold(n, typ) && t != AnyType {
			rt = t
		}
	}
	if rt == 0 {
		return Resource{}, fmt.Errorf("resource %q: unknown type %q (Cluster, Namespace, Topic, Group)", key, typ)
	}
	switch {
	case name == "*":
		return Resource{Type: rt, Pattern: AnyName}, nil
	case strings.HasSuffix(name, "*"):
		return Resource{Type: rt, Name: strings.TrimSuffix(name, "*"), Pattern: Prefixed}, nil
	case name == "":
		return Resource{}, fmt.Errorf("resource %q: no name", key)
	}
	return Resource{Type: rt, Name: name, Pattern: Literal}, nil
}

// String is the resource key, as Java's getResourceKey writes it.
func (r Resource) String() string {
	if r.Type == AnyType {
		return "*"
	}
	switch r.Pattern {
	case AnyName:
		return typeNames[r.Type] + ":*"
	case Prefixed:
		return typeNames[r.Type] + ":" + r.Name + "*"
	}
	return typeNames[r.Type] + ":" + r.Name
}

// Covers reports whether rule r covers need, a literal resource or every
// one of a type (AnyName: only a rule for every one of the type, or for
// anything, covers it).
func (r Resource) Covers(need Resource) bool {
	if r.Type == AnyType {
		return true
	}
	if r.Type != need.Type {
		return false
	}
	switch r.Pattern {
	case AnyName:
		return true
	case Prefixed:
		return need.Pattern != AnyName && strings.HasPrefix(need.Name, r.Name)
	}
	return need.Pattern != AnyName && need.Name == r.Name
}

// Action is a set of actions (Java's Action).
type Action uint16

// Actions. All in a rule grants every action; Any in a need is met by any
// action a rule names.
const (
	Pub Action = 1 << iota
	Sub
	Create
	Update
	Delete
	Get
	List
	All
	Any
)

var actionNames = []struct {
	a    Action
	name string
}{{All, "All"}, {Pub, "Pub"}, {Sub, "Sub"}, {Create, "Create"}, {Update, "Update"}, {Delete, "Delete"}, {Get, "Get"}, {List, "List"}, {Any, "Any"}}

// ParseActions reads action names, without regard to case.
func ParseActions(names []string) (Action, error) {
	var set Action
	for _, n := range names {
		found := false
		for _, an := range actionNames {
			if strings.EqualFold(an.name, strings.TrimSpace(n)) {
				set |= an.a
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("action %q: want All, Pub, Sub, Create, Update, Delete, Get or List", n)
		}
	}
	return set, nil
}

// Names lists the actions of a, in Java's order.
func (a Action) Names() []string {
	var out []string
	for _, an := range actionNames {
		if a&an.a != 0 {
			out = append(out, an.name)
		}
	}
	return out
}

// Need is one resource a request needs and the actions any one of which
// grants it (Java's DefaultAuthorizationContext).
type Need struct {
	Resource Resource
	Actions  Action
}

// String is "Topic:t Pub,Sub".
func (n Need) String() string {
	return n.Resource.String() + " " + strings.Join(n.Actions.Names(), ",")
}

// RetryPrefix starts a consumer group's retry topic (Java
// MixAll.RETRY_GROUP_TOPIC_PREFIX).
const RetryPrefix = "%RETRY%"

// TopicNeed is a on topic t; a retry topic names its group, so it is
// GroupNeed of that group.
func TopicNeed(t string, a Action) Need {
	if g, ok := strings.CutPrefix(t, RetryPrefix); ok {
		return Need{Resource{Type: Group, Name: g, Pattern: Literal}, a}
	}
	return Need{Resource{Type: Topic, Name: t, Pattern: Literal}, a}
}

// GroupNeed is a on consumer group g, named by itself or by its retry
// topic (Java Resource.ofGroup).
func GroupNeed(g string, a Action) Need {
	return Need{Resource{Type: Group, Name: strings.TrimPrefix(g, RetryPrefix), Pattern: Literal}, a}
}

// ClusterNeed is a on cluster c; "" is every cluster, which only a rule
// for every cluster (or for anything) grants, as the request reaches
// whichever cluster it names.
func ClusterNeed(c string, a Action) Need {
	if c == "" {
		return Need{Resource{Type: Cluster, Pattern: AnyName}, a}
	}
	return Need{Resource{Type: Cluster, Name: c, Pattern: Literal}, a}
}

// AdminNeed is what only an administrator holds: every action on cluster
// c. A plain_acl.yml admin account and an ACL 2.0 super user have it.
func AdminNeed(c string) Need { return ClusterNeed(c, All) }

// AppendNeed appends n to ns unless ns holds it already. Two needs of one
// resource with different actions stay two: each must be granted (one
// need's actions are alternatives, so merging them would weaken both).
func AppendNeed(ns []Need, n Need) []Need {
	for _, have := range ns {
		if have == n {
			return ns
		}
	}
	return append(ns, n)
}
