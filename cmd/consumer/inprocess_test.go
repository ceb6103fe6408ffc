package main

import (
	"context"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/integration/cluster"
)

// TestInProcessModes runs the command in this process (so the race
// detector sees the consumer's own code) in each consume mode against one
// cluster.
func TestInProcessModes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	t.Setenv("HOME", t.TempDir()) // broadcasting groups keep their offsets in ~/.rocketmq_offsets
	cl := cluster.Start(t)
	const topic, n = "modes", 6
	createTopic(t, cl, topic, 2)
	msgs := produce(t, officialProducer(t, cl), topic, 0, n, "TagA", "TagB")
	ns := func(k string) string {
		if k == "NAMESRV_ADDR" {
			return cl.NamesrvAddr()
		}
		return ""
	}
	base := []string{"--topic", topic, "--from", "first", "--format", "json", "--log-level", "error"}

	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"no group until idle", []string{"--idle-timeout", "300ms"}, n},
		{"no group max", []string{"--max", "4"}, 4},
		{"no group tag", []string{"--tag", "TagB", "--idle-timeout", "300ms"}, n / 2},
		{"concurrent until idle", []string{"--group", "modes-c", "--idle-timeout", "300ms"}, n},
		{"orderly until idle", []string{"--group", "modes-o", "--orderly", "--idle-timeout", "300ms"}, n},
		{"broadcast until idle", []string{"--group", "modes-b", "--broadcast", "--idle-timeout", "300ms"}, n},
		{"broadcast max", []string{"--group", "modes-bm", "--broadcast", "--max", "4"}, 4},
		{"orderly tag", []string{"--group", "modes-ot", "--orderly", "--tag", "TagB", "--idle-timeout", "300ms"}, n / 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runInProcess(context.Background(), ns, append(base, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, errOut)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != tc.want {
				t.Fatalf("%d messages, want %d:\n%s\nstderr:\n%s", len(lines), tc.want, out, errOut)
			}
			recs := parseJSONLines(t, lines)
			checkRecords(t, topic, recs, filterSent(msgs, recs))
		})
	}

	// A named group resumes where it stopped: the second run gets only
	// what is left.
	named := append(base, "--group", "debug-named")
	code, out, errOut := runInProcess(context.Background(), ns, append(named, "--max", "4")...)
	if code != 0 || strings.Count(out, "\n") != 4 {
		t.Fatalf("first run: exit %d, %q; stderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "consumer: group debug-named;") {
		t.Errorf("stderr:\n%s", errOut)
	}
	code, out2, errOut := runInProcess(context.Background(), ns, append(named, "--idle-timeout", "300ms")...)
	if code != 0 || strings.Count(out2, "\n") != n-4 {
		t.Fatalf("second run: exit %d, %q; stderr:\n%s", code, out2, errOut)
	}
	recs := parseJSONLines(t, strings.Split(strings.TrimSuffix(out+out2, "\n"), "\n"))
	checkRecords(t, topic, recs, msgs)
}
