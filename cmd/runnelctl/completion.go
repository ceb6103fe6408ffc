package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
)

// completionTimeout bounds asking the cluster for names while a shell
// waits for completions: an unreachable name server must not hang Tab.
const completionTimeout = 1500 * time.Millisecond

// completeTopicArg completes the one TOPIC argument of `topic route` and
// the like.
func (a *app) completeTopicArg(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return a.completeTopics(cmd, args, toComplete)
}

// completeTopics offers the topics the name server knows (system topics
// only once the word typed is not empty), for --topic.
func (a *app) completeTopics(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return a.complete(func(ctx context.Context, adm *admin.Admin) ([]string, error) {
		topics, err := adm.TopicList(ctx)
		out := topics[:0]
		for _, t := range topics {
			if strings.HasPrefix(t, toComplete) && (!admin.IsSystemTopic(t) || toComplete != "") {
				out = append(out, t)
			}
		}
		return out, err
	})
}

// completeGroups offers the consumer groups the brokers know, for --group.
func (a *app) completeGroups(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return a.complete(func(ctx context.Context, adm *admin.Admin) ([]string, error) {
		groups, err := adm.ConsumerGroups(ctx)
		var out []string
		for _, g := range groups {
			if strings.HasPrefix(g.Name, toComplete) {
				out = append(out, g.Name)
			}
		}
		slices.Sort(out)
		return out, err
	})
}

// complete offers the names list gives, none when it fails or the cluster
// does not answer within completionTimeout. No file names either way.
func (a *app) complete(list func(context.Context, *admin.Admin) ([]string, error)) ([]string, cobra.ShellCompDirective) {
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	adm, err := a.admin()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names, err := list(ctx, adm)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// completeNames registers topic and group completion on every --topic and
// --group flag under c.
func (a *app) completeNames(c *cobra.Command) {
	if c.Flags().Lookup("topic") != nil {
		_ = c.RegisterFlagCompletionFunc("topic", a.completeTopics)
	}
	if c.Flags().Lookup("group") != nil {
		_ = c.RegisterFlagCompletionFunc("group", a.completeGroups)
	}
	for _, sub := range c.Commands() {
		a.completeNames(sub)
	}
}

// errAborted is returned when the user answers no to a confirmation.
var errAborted = errors.New("aborted: nothing was changed")

// confirm asks on stderr before a destructive change when stdin is a
// terminal and --yes was not given; anything but y or yes aborts.
func (a *app) confirm(yes bool, what string) error {
	if yes || !a.stdinTerminal {
		return nil
	}
	fmt.Fprintf(a.stderr, "%s? [y/N] ", what)
	line, err := bufio.NewReader(a.stdin).ReadString('\n')
	if err != nil && line == "" {
		return errAborted
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return errAborted
}
