package auth

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// UserType is Super (every request passes authorization) or Normal.
type UserType string

// User types, as Java names them.
const (
	Super  UserType = "Super"
	Normal UserType = "Normal"
)

// User statuses, as Java names them.
const (
	Enabled  = "enable"
	Disabled = "disable"
)

// Decision is a rule's verdict.
type Decision uint8

// Decisions (Java Decision).
const (
	Allow Decision = iota + 1
	Deny
)

func (d Decision) String() string {
	if d == Deny {
		return "Deny"
	}
	return "Allow"
}

// Policy types (Java PolicyType).
const (
	Custom  = "Custom"
	Default = "Default"
)

// Entry is one rule of a policy.
type Entry struct {
	Resource  acl.Resource
	Actions   acl.Action
	SourceIPs []netip.Prefix // none: from anywhere
	Decision  Decision
}

// ACL is a subject's policies, by policy type.
type ACL struct {
	Subject  string // "User:name"
	Policies map[string][]Entry
}

// user is a user as the cache holds it.
type user struct {
	info protocol.UserInfo
	key  keyVerifier
}

// parseIP reads a source IP: an address (a one-address range) or a CIDR.
func parseIP(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("source ip %q: want an address or a CIDR range", s)
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// entryFromInfo reads one rule as the admin requests carry it, checking
// what Java's AuthorizationMetadataManagerImpl.validate checks, with its
// messages.
func entryFromInfo(e protocol.PolicyEntryInfo) (Entry, error) {
	var out Entry
	if strings.TrimSpace(e.Resource) == "" {
		return out, refuse("The resource is null.")
	}
	r, err := acl.ParseResource(e.Resource)
	if err != nil {
		return out, refuse("The resource type is null. (%v)", err)
	}
	out.Resource = r
	if len(e.Actions) == 0 {
		return out, refuse("The actions is empty.")
	}
	if out.Actions, err = acl.ParseActions(e.Actions); err != nil {
		return out, refuse("The actions is empty. (%v)", err)
	}
	if out.Actions&acl.Any != 0 {
		return out, refuse("The actions can not be Any.")
	}
	for _, ip := range e.SourceIps {
		if strings.TrimSpace(ip) == "" {
			return out, refuse("The source ip is empty.")
		}
		p, err := parseIP(ip)
		if err != nil {
			return out, refuse("The source ip is invalid.")
		}
		out.SourceIPs = append(out.SourceIPs, p)
	}
	switch {
	case strings.EqualFold(e.Decision, "Allow"):
		out.Decision = Allow
	case strings.EqualFold(e.Decision, "Deny"):
		out.Decision = Deny
	default:
		return out, refuse("The decision is null or illegal.")
	}
	return out, nil
}

// info is e as the admin requests carry it.
func (e Entry) info() protocol.PolicyEntryInfo {
	out := protocol.PolicyEntryInfo{Resource: e.Resource.String(), Actions: e.Actions.Names(), Decision: e.Decision.String()}
	for _, p := range e.SourceIPs {
		if p.IsSingleIP() {
			out.SourceIps = append(out.SourceIps, p.Addr().String())
		} else {
			out.SourceIps = append(out.SourceIps, p.String())
		}
	}
	return out
}

// policyType reads a policy type ("" is Custom), without regard to case.
func policyType(s string) (string, error) {
	switch {
	case s == "" || strings.EqualFold(s, Custom):
		return Custom, nil
	case strings.EqualFold(s, Default):
		return Default, nil
	}
	return "", refuse("The policy type %s is illegal.", s)
}

// aclFromInfo reads an ACL as the admin requests carry it.
func aclFromInfo(a protocol.ACLInfo) (*ACL, error) {
	if len(a.Policies) == 0 {
		return nil, refuse("The policies is empty.")
	}
	out := &ACL{Subject: a.Subject, Policies: map[string][]Entry{}}
	for _, p := range a.Policies {
		pt, err := policyType(p.PolicyType)
		if err != nil {
			return nil, err
		}
		if len(p.Entries) == 0 {
			return nil, refuse("The policy entries is empty.")
		}
		for _, ei := range p.Entries {
			e, err := entryFromInfo(ei)
			if err != nil {
				return nil, err
			}
			out.Policies[pt] = upsert(out.Policies[pt], e)
		}
	}
	return out, nil
}

// upsert replaces the entry of e's resource in entries, or appends e: a
// policy holds one entry per resource (Java Policy.updateEntry).
func upsert(entries []Entry, e Entry) []Entry {
	for i := range entries {
		if entries[i].Resource == e.Resource {
			entries[i] = e
			return entries
		}
	}
	return append(entries, e)
}

// info is a as the admin requests carry it, Custom policy first.
func (a *ACL) info() protocol.ACLInfo {
	out := protocol.ACLInfo{Subject: a.Subject}
	for _, pt := range []string{Custom, Default} {
		es := a.Policies[pt]
		if len(es) == 0 {
			continue
		}
		p := protocol.PolicyInfo{PolicyType: pt}
		for _, e := range es {
			p.Entries = append(p.Entries, e.info())
		}
		out.Policies = append(out.Policies, p)
	}
	return out
}

// clone copies a deeply enough to change its policies.
func (a *ACL) clone() *ACL {
	out := &ACL{Subject: a.Subject, Policies: make(map[string][]Entry, len(a.Policies))}
	for pt, es := range a.Policies {
		out.Policies[pt] = slices.Clone(es)
	}
	return out
}
