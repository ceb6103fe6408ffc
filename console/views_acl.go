package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// userRow is a user as the console shows it: never its password.
type userRow struct {
	Name   string `json:"username"`
	Type   string `json:"userType"`
	Status string `json:"userStatus"`
}

type ruleRow struct {
	Subject   string `json:"subject"`
	Policy    string `json:"policyType"`
	Resource  string `json:"resource"`
	Actions   string `json:"actions"`
	SourceIPs string `json:"sourceIps"`
	Decision  string `json:"decision"`
}

type aclModel struct {
	// Enabled says the cluster answers ACL 2.0's requests; Off explains
	// why not.
	Enabled bool      `json:"enabled"`
	Off     string    `json:"off,omitempty"`
	Users   []userRow `json:"users"`
	Rules   []ruleRow `json:"rules"`
	// Signed names the access key the console signs with ("" none).
	Signed string `json:"signedAs,omitempty"`
	Plain  string `json:"plainAcl"`
}

func (c *Console) aclView(ctx context.Context, _ *http.Request) (string, any, error) {
	m := aclModel{Users: []userRow{}, Rules: []ruleRow{}, Signed: c.cfg.Admin.Credentials.AccessKey,
		Plain: "Plain ACL (1.0) accounts live in each broker's plain_acl.yml (rocketmq.acl.plain.file), which a broker reloads when it changes; RocketMQ 4.x's requests to edit them remotely are not served by Runnel."}
	users, err := c.adm.ListUsers(ctx, admin.Where{}, "")
	var re *admin.ResponseError
	switch {
	case errors.Is(err, admin.ErrUnsupported):
		m.Off = "This cluster's brokers do not serve ACL 2.0 (REQUEST_CODE_NOT_SUPPORTED): there are no users and rules to show."
		return "Access control", m, nil
	case errors.As(err, &re) && strings.Contains(strings.ToLower(re.Remark), "not enabled"):
		m.Off = "ACL 2.0 is not enabled on this cluster (" + re.Remark + ")."
		return "Access control", m, nil
	case err != nil:
		return "Access control", m, err
	}
	// A broker may serve ACL 2.0's requests with authentication off (an
	// empty user list): it is on when a broker's config says so, when
	// users exist, or when the console was given credentials to sign with.
	m.Enabled = len(users) > 0 || m.Signed != "" || c.brokersSay(ctx, "authenticationEnabled", "authorizationEnabled")
	if !m.Enabled {
		m.Off = "ACL 2.0 is not enabled on this cluster: no broker reports authenticationEnabled or authorizationEnabled, and no user exists. " +
			"Turn it on in broker.conf (or runnel dev --auth-root NAME:PASSWORD), then give the console the credentials to sign with."
		return "Access control", m, nil
	}
	for _, u := range users {
		m.Users = append(m.Users, userRow{Name: u.Username, Type: u.UserType, Status: u.UserStatus})
	}
	acls, err := c.adm.ListACLs(ctx, admin.Where{}, "", "")
	if err != nil {
		return "Access control", m, err
	}
	for _, a := range acls {
		for _, p := range a.Policies {
			for _, e := range p.Entries {
				m.Rules = append(m.Rules, ruleRow{Subject: a.Subject, Policy: p.PolicyType, Resource: e.Resource,
					Actions: strings.Join(e.Actions, ","), SourceIPs: strings.Join(e.SourceIps, ","), Decision: e.Decision})
			}
		}
	}
	return "Access control", m, nil
}

const aclPage = "/acl"

// userForm is the user a create or update form describes.
func userForm(f url.Values) protocol.UserInfo {
	return protocol.UserInfo{Username: f.Get("username"), Password: f.Get("password"), UserType: f.Get("userType"), UserStatus: f.Get("userStatus")}
}

func (c *Console) createUser(ctx context.Context, f url.Values) (any, string, string, error) {
	u := userForm(f)
	u.Username = strings.TrimSpace(u.Username)
	if u.Username == "" || u.Password == "" {
		return nil, "", "", badRequest("A new user needs a name and a password.")
	}
	return c.writeUser(ctx, c.adm.CreateUser, u, "created")
}

func (c *Console) updateUser(ctx context.Context, f url.Values) (any, string, string, error) {
	u := userForm(f)
	if u.Username == "" {
		return nil, "", "", badRequest("Update which user?")
	}
	return c.writeUser(ctx, c.adm.UpdateUser, u, "updated")
}

// writeUser creates or updates u on every broker with write, and says so
// with done.
func (c *Console) writeUser(ctx context.Context, write func(context.Context, admin.Where, protocol.UserInfo) ([]admin.Node, error), u protocol.UserInfo, done string) (any, string, string, error) {
	nodes, err := write(ctx, admin.Where{}, u)
	if err != nil {
		return nil, "", "", err
	}
	return nodes, fmt.Sprintf("User %s %s on %d broker(s).", u.Username, done, len(nodes)), aclPage, nil
}

func (c *Console) deleteUser(ctx context.Context, f url.Values) (any, string, string, error) {
	name := f.Get("username")
	if name == "" || f.Get("confirm") != name {
		return nil, "", "", badRequest("Not deleted: type the user's name to confirm the deletion.")
	}
	nodes, err := c.adm.DeleteUser(ctx, admin.Where{}, name)
	if err != nil {
		return nil, "", "", err
	}
	return nodes, fmt.Sprintf("User %s deleted from %d broker(s).", name, len(nodes)), aclPage, nil
}

func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' })
}

func subjectOf(s string) string {
	s = strings.TrimSpace(s)
	if s != "" && !strings.Contains(s, ":") {
		return "User:" + s
	}
	return s
}

func (c *Console) createRule(ctx context.Context, f url.Values) (any, string, string, error) {
	subject := subjectOf(f.Get("subject"))
	resources, actions := splitList(f.Get("resources")), splitList(f.Get("actions"))
	if subject == "" || len(resources) == 0 || len(actions) == 0 {
		return nil, "", "", badRequest("A rule needs a subject, resources and actions.")
	}
	decision := f.Get("decision")
	if decision == "" {
		decision = "Allow"
	}
	p := protocol.PolicyInfo{PolicyType: "Custom"}
	for _, r := range resources {
		p.Entries = append(p.Entries, protocol.PolicyEntryInfo{Resource: r, Actions: actions, SourceIps: splitList(f.Get("sourceIps")), Decision: decision})
	}
	nodes, err := c.adm.CreateACL(ctx, admin.Where{}, protocol.ACLInfo{Subject: subject, Policies: []protocol.PolicyInfo{p}})
	if err != nil {
		return nil, "", "", err
	}
	return nodes, fmt.Sprintf("Rule for %s on %s added on %d broker(s).", subject, strings.Join(resources, ", "), len(nodes)), aclPage, nil
}

func (c *Console) deleteRule(ctx context.Context, f url.Values) (any, string, string, error) {
	subject := subjectOf(f.Get("subject"))
	if subject == "" {
		return nil, "", "", badRequest("Delete the rules of which subject?")
	}
	nodes, err := c.adm.DeleteACL(ctx, admin.Where{}, subject, f.Get("policyType"), f.Get("resource"))
	if err != nil {
		return nil, "", "", err
	}
	what := "every rule"
	if r := f.Get("resource"); r != "" {
		what = "the rule on " + r
	}
	return nodes, fmt.Sprintf("Deleted %s of %s on %d broker(s).", what, subject, len(nodes)), aclPage, nil
}

type producerRow struct {
	admin.ProducerClient
	Protocol string `json:"protocol"`
}

type producersModel struct {
	Group string        `json:"group,omitempty"`
	All   bool          `json:"listedAll"` // the cluster lists every producer
	Rows  []producerRow `json:"producers"`
	Note  string        `json:"note,omitempty"`
}

func (c *Console) producersView(ctx context.Context, r *http.Request) (string, any, error) {
	m := producersModel{Group: strings.TrimSpace(r.URL.Query().Get("group")), Rows: []producerRow{}}
	var rows []admin.ProducerClient
	var err error
	if m.Group == "" {
		rows, err = c.adm.AllProducers(ctx)
		switch {
		case errors.Is(err, admin.ErrUnsupported):
			m.Note = "This cluster's brokers cannot list every producer (GET_ALL_PRODUCER_INFO is not supported): name a producer group to see its connections."
			return "Producers", m, nil
		case err != nil:
			return "Producers", m, err
		}
		m.All = true
	} else {
		rows, err = c.adm.ProducerConnections(ctx, m.Group)
		if errors.Is(err, admin.ErrNotOnline) {
			m.Note = fmt.Sprintf("No producer of group %s is connected to any broker.", m.Group)
			return "Producers of " + m.Group, m, nil
		}
		if err != nil {
			return "Producers of " + m.Group, m, err
		}
	}
	for _, p := range rows {
		if p.Group == "" {
			p.Group = m.Group
		}
		m.Rows = append(m.Rows, producerRow{ProducerClient: p, Protocol: protocolName(p.Protocol)})
	}
	if len(m.Rows) == 0 {
		m.Note = "No producer is connected."
	}
	return "Producers", m, nil
}

// brokersSay reports whether any broker's config sets one of keys true.
func (c *Console) brokersSay(ctx context.Context, keys ...string) bool {
	nodes, err := c.adm.BrokerNodes(ctx, nil)
	if err != nil {
		return false
	}
	for _, n := range nodes {
		cfg, err := c.adm.BrokerConfig(ctx, n)
		if err != nil {
			continue
		}
		for _, k := range keys {
			if strings.EqualFold(cfg[k], "true") {
				return true
			}
		}
	}
	return false
}
