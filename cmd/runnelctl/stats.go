package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
)

func newStatsCmd(a *app) *cobra.Command {
	cmd := nounCmd("stats", "Statistics over the whole cluster", "", `  runnelctl stats all`)
	var f statsFlags
	statsAll := &cobra.Command{
		Use:   "all",
		Short: "Messages, lag and rates of every topic and its consumer groups",
		Long: `For every topic: the messages it holds (max - min offset over its queues), its
rate in (InTPS: messages stored a second) and, per consumer group of it, the
group's lag and rate out (OutTPS: offsets committed a second), as mqadmin
statsAll shows them.

The rates are measured here, from two readings of the offsets --interval apart
(0: no rates, one reading). Consumers commit their offsets every few seconds
(5 s for RocketMQ's clients and ours), so OutTPS moves in steps over a short
interval; a longer one gives a steadier figure.

System topics (TBW102, SCHEDULE_TOPIC_XXXX, rmq_sys_*, RMQ_SYS_*, the topics
named after clusters and brokers, <cluster>_REPLY_TOPIC) and the %RETRY% and
%DLQ% topics of groups are left out unless --all is given, as in topic list.`,
		Example: `  runnelctl stats all
  runnelctl stats all --topic orders --interval 10s
  runnelctl stats all --active -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.interval < 0 {
				return fmt.Errorf("--interval %v: want 0 (no rates) or more", f.interval)
			}
			return a.statsAll(cmd.Context(), f)
		},
	}
	fl := statsAll.Flags()
	fl.BoolVarP(&f.all, "all", "a", false, "include system, retry and dead-letter topics")
	fl.StringVarP(&f.topic, "topic", "t", "", "only this topic")
	fl.BoolVar(&f.active, "active", false, "only topics and groups that moved messages during --interval")
	fl.DurationVar(&f.interval, "interval", 2*time.Second, "time between the two readings the rates come from (0: no rates)")
	cmd.AddCommand(statsAll)
	return cmd
}

// statsFlags are stats all's options.
type statsFlags struct {
	all, active bool
	topic       string
	interval    time.Duration
}

// statsRow is one topic and group in `stats all`; Group is "" for a topic
// nobody consumes, and OutTPS is then 0.
type statsRow struct {
	Topic    string  `json:"topic"`
	Messages int64   `json:"messages"`
	Group    string  `json:"group,omitempty"`
	Lag      int64   `json:"lag"`
	InTPS    float64 `json:"inTps"`
	OutTPS   float64 `json:"outTps"`
}

// topicReading is one reading of a topic's offsets: the sum of its queues'
// max offsets, and per group the sum of its committed offsets.
type topicReading struct {
	messages, stored int64
	lag, committed   map[string]int64 // by group
	groups           []string
}

func (a *app) statsAll(ctx context.Context, f statsFlags) error {
	adm, err := a.admin()
	if err != nil {
		return err
	}
	topics, err := adm.TopicList(ctx)
	if err != nil {
		return err
	}
	if !f.all {
		if topics, err = a.visibleTopics(ctx, topics); err != nil {
			return err
		}
	}
	if f.topic != "" {
		if !slices.Contains(topics, f.topic) {
			return fmt.Errorf("topic %s is not in the cluster's topic list (runnelctl topic list --all shows them)", f.topic)
		}
		topics = []string{f.topic}
	}
	first, t0, err := readTopics(ctx, adm, topics)
	if err != nil {
		return err
	}
	second, t1 := first, t0
	if f.interval > 0 {
		if err := sleepCtx(ctx, f.interval); err != nil {
			return err
		}
		if second, t1, err = readTopics(ctx, adm, topics); err != nil {
			return err
		}
	}
	rate := func(before, after int64) float64 {
		el := t1.Sub(t0).Seconds()
		if el <= 0 || after <= before {
			return 0
		}
		return float64(after-before) / el
	}
	rows := []statsRow{}
	for _, topic := range topics {
		r, ok := second[topic]
		if !ok {
			continue // a topic named after a cluster or broker has no stats
		}
		in := rate(first[topic].stored, r.stored)
		if len(r.groups) == 0 && (!f.active || in > 0) {
			rows = append(rows, statsRow{Topic: topic, Messages: r.messages, InTPS: in})
		}
		for _, g := range r.groups {
			out := rate(first[topic].committed[g], r.committed[g])
			if f.active && in == 0 && out == 0 {
				continue
			}
			rows = append(rows, statsRow{Topic: topic, Messages: r.messages, Group: g, Lag: r.lag[g], InTPS: in, OutTPS: out})
		}
	}
	if a.output == "json" {
		return writeJSON(a.stdout, rows)
	}
	t := newTable(a.stdout, "TOPIC", "MESSAGES", "GROUP", "LAG", "IN TPS", "OUT TPS")
	for _, r := range rows {
		lag, out := "-", "-"
		if r.Group != "" {
			lag, out = fmt.Sprint(r.Lag), fmt.Sprintf("%.2f", r.OutTPS)
		}
		t.row(r.Topic, r.Messages, dash(r.Group), lag, fmt.Sprintf("%.2f", r.InTPS), out)
	}
	return t.flush()
}

// readTopics reads every topic's offsets once, and when.
func readTopics(ctx context.Context, adm *admin.Admin, topics []string) (map[string]topicReading, time.Time, error) {
	out := map[string]topicReading{}
	at := time.Now()
	for _, topic := range topics {
		stats, err := adm.TopicStats(ctx, topic)
		if err != nil {
			continue // a topic named after a cluster or broker has no stats
		}
		r := topicReading{lag: map[string]int64{}, committed: map[string]int64{}}
		for _, s := range stats {
			r.messages += s.MaxOffset - s.MinOffset
			r.stored += s.MaxOffset
		}
		if r.groups, err = adm.TopicConsumers(ctx, topic); err != nil {
			return nil, at, err
		}
		for _, g := range r.groups {
			progress, err := adm.ConsumerProgress(ctx, g, topic)
			if err != nil {
				return nil, at, err
			}
			r.lag[g] = admin.TotalLag(progress)
			for _, q := range progress {
				r.committed[g] += max(q.ConsumerOffset, 0)
			}
		}
		out[topic] = r
	}
	return out, at, nil
}

// sleepCtx waits d, or less when ctx ends first (its error then).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
