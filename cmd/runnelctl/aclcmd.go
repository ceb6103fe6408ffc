package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// subjectArg accepts "User:alice" or "alice".
func subjectArg(s string) string {
	if strings.Contains(s, ":") {
		return s
	}
	return "User:" + s
}

func newACLCmd(a *app) *cobra.Command {
	cmd := nounCmd("acl", "ACL 2.0 rules (RocketMQ 5.3): create, update, delete, get, list", `The ACL 2.0 rules of a user (its subject, User:NAME), kept by the brokers and
checked when broker.conf says authorizationEnabled=true. A rule grants (Allow)
or refuses (Deny) actions on resources, from source IPs:

  resources  Cluster:NAME, Topic:NAME, Group:NAME; a name ending in * is a prefix
             (Topic:order*), Topic:* is every topic, * is anything
  actions    Pub, Sub, Create, Update, Delete, Get, List, All
  source IPs addresses or CIDR ranges (default: from anywhere)

The most specific rule decides: a literal name before a prefix, a longer prefix
before a shorter, and Deny before Allow among equals; no rule is a refusal.
create and update add rules to the subject's, a rule replacing the one of its
resource.`, `  runnelctl acl create User:alice --resource Topic:orders,Group:billing --actions Pub,Sub
  runnelctl acl create alice --resource 'Topic:order*' --actions Pub --source-ip 10.0.0.0/8
  runnelctl acl create alice --resource Topic:orders-audit --actions Pub --decision Deny
  runnelctl acl get alice
  runnelctl acl delete alice --resource Topic:orders-audit`)
	var w authWhere
	var resources, actions, ips []string
	var decision, policy string
	ruleFlags := func(c *cobra.Command) {
		w.flags(c)
		c.Flags().StringSliceVarP(&resources, "resource", "r", nil, "resources the rule is for (comma-separated or repeated)")
		c.Flags().StringSliceVarP(&actions, "actions", "a", nil, "actions: Pub, Sub, Create, Update, Delete, Get, List, All")
		c.Flags().StringSliceVarP(&ips, "source-ip", "i", nil, "source addresses or CIDR ranges (default: anywhere)")
		c.Flags().StringVarP(&decision, "decision", "d", "Allow", "Allow or Deny")
		_ = c.MarkFlagRequired("resource")
		_ = c.MarkFlagRequired("actions")
	}
	put := func(update bool) func(c *cobra.Command, args []string) error {
		return func(c *cobra.Command, args []string) error {
			info := protocol.ACLInfo{Subject: subjectArg(args[0])}
			p := protocol.PolicyInfo{PolicyType: "Custom"}
			for _, r := range resources {
				p.Entries = append(p.Entries, protocol.PolicyEntryInfo{Resource: r, Actions: actions, SourceIps: ips, Decision: decision})
			}
			info.Policies = []protocol.PolicyInfo{p}
			adm, err := a.admin()
			if err != nil {
				return err
			}
			do, verb := adm.CreateACL, "created"
			if update {
				do, verb = adm.UpdateACL, "updated"
			}
			nodes, err := do(c.Context(), w.Where, info)
			if err != nil {
				return err
			}
			return printNodes(a, fmt.Sprintf("%s %d rule(s) of %s", verb, len(p.Entries), info.Subject), nodes)
		}
	}
	create := &cobra.Command{Use: "create SUBJECT --resource R --actions A", Short: "Add rules to a user's ACL",
		Example: `  runnelctl acl create User:alice --resource Topic:orders,Group:billing --actions Pub,Sub
  runnelctl acl create alice --resource 'Topic:order*' --actions Pub --source-ip 10.0.0.0/8
  runnelctl acl create alice --resource Topic:orders-audit --actions Pub --decision Deny`,
		Aliases: []string{"createAcl"}, Args: exactArgs(1, "a subject (User:NAME or NAME)"), RunE: put(false)}
	ruleFlags(create)
	update := &cobra.Command{Use: "update SUBJECT --resource R --actions A", Short: "Add or replace rules of a user's ACL",
		Example: `  runnelctl acl update alice --resource Topic:orders --actions Pub,Sub,Get`,
		Aliases: []string{"updateAcl"}, Args: exactArgs(1, "a subject (User:NAME or NAME)"), RunE: put(true)}
	ruleFlags(update)
	var delResource string
	del := &cobra.Command{
		Use: "delete SUBJECT [--resource R]", Short: "Delete a user's ACL, or its rule for one resource",
		Example: `  runnelctl acl delete alice --resource Topic:orders-audit
  runnelctl acl delete User:alice`,
		Aliases: []string{"deleteAcl"}, Args: exactArgs(1, "a subject (User:NAME or NAME)"),
		RunE: func(c *cobra.Command, args []string) error {
			adm, err := a.admin()
			if err != nil {
				return err
			}
			subject := subjectArg(args[0])
			nodes, err := adm.DeleteACL(c.Context(), w.Where, subject, policy, delResource)
			if err != nil {
				return err
			}
			what := "deleted the acl of " + subject
			if delResource != "" {
				what = fmt.Sprintf("deleted the rule for %s of %s", delResource, subject)
			}
			return printNodes(a, what, nodes)
		},
	}
	w.flags(del)
	del.Flags().StringVarP(&delResource, "resource", "r", "", "only the rule for this resource")
	del.Flags().StringVar(&policy, "policy-type", "", "Custom (default) or Default")
	get := &cobra.Command{
		Use: "get SUBJECT", Short: "Show a user's rules",
		Example: `  runnelctl acl get alice
  runnelctl acl get User:alice -o json`, Aliases: []string{"getAcl"}, Args: exactArgs(1, "a subject (User:NAME or NAME)"),
		RunE: func(c *cobra.Command, args []string) error {
			adm, err := a.admin()
			if err != nil {
				return err
			}
			got, found, err := adm.GetACL(c.Context(), w.Where, subjectArg(args[0]))
			if err != nil {
				return err
			}
			if !found {
				return fmt.Errorf("acl of %q: %w", subjectArg(args[0]), admin.ErrNotFound)
			}
			return printACLs(a, []protocol.ACLInfo{got})
		},
	}
	w.flags(get)
	var subjectFilter, resourceFilter string
	list := &cobra.Command{
		Use: "list [--subject-filter TEXT] [--resource-filter TEXT]", Short: "List rules",
		Example: `  runnelctl acl list
  runnelctl acl list --resource-filter Topic:order`, Aliases: []string{"listAcl"}, Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			adm, err := a.admin()
			if err != nil {
				return err
			}
			as, err := adm.ListACLs(c.Context(), w.Where, subjectFilter, resourceFilter)
			if err != nil {
				return err
			}
			return printACLs(a, as)
		},
	}
	w.flags(list)
	list.Flags().StringVar(&subjectFilter, "subject-filter", "", "only subjects containing this")
	list.Flags().StringVar(&resourceFilter, "resource-filter", "", "only rules whose resource contains this")
	cmd.AddCommand(create, update, del, get, list)
	return cmd
}

// printACLs shows one rule a line.
func printACLs(a *app, as []protocol.ACLInfo) error {
	if a.output == "json" {
		return writeJSONList(a.stdout, as)
	}
	t := newTable(a.stdout, "SUBJECT", "POLICY", "RESOURCE", "ACTIONS", "SOURCE IPS", "DECISION")
	for _, acl := range as {
		for _, p := range acl.Policies {
			for _, e := range p.Entries {
				t.row(acl.Subject, p.PolicyType, e.Resource, strings.Join(e.Actions, ","), dash(strings.Join(e.SourceIps, ",")), e.Decision)
			}
		}
	}
	return t.flush()
}
