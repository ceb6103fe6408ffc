package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/integration/cluster"
)

// TestSQLFiltersOnTheBroker: consumer --sql prints exactly the messages
// whose properties match, the broker having filtered them: our client
// passes SQL92 messages on as the broker sent them, so a message the
// broker let through wrongly would be printed here.
func TestSQLFiltersOnTheBroker(t *testing.T) {
	cl := cluster.Start(t)
	const topic = "sql-cli"
	createTopic(t, cl, topic, 2)
	sent := produce(t, officialProducer(t, cl), topic, 0, 12, "TagA", "TagB", "TagC")
	// produce gives message i the property seq=i and tags A, B, C in turn.
	var want []string
	for i, s := range sent {
		if i >= 4 && s.tag != "TagB" {
			want = append(want, s.msgID)
		}
	}
	code, stdout, stderr := runHere(t, cl.NamesrvAddr(), "--topic", topic, "--from", "first",
		"--sql", "seq >= 4 AND TAGS <> 'TagB'", "--max", strconv.Itoa(len(want)), "--idle-timeout", "30s",
		"-o", "json", "--log-level", "error")
	if code != 0 {
		t.Fatalf("consumer --sql: exit %d, stderr:\n%s", code, stderr)
	}
	var got []string
	for _, r := range parseJSONLines(t, strings.Split(strings.TrimSpace(stdout), "\n")) {
		got = append(got, r.MsgID)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("consumer --sql printed %v, want %v", got, want)
	}
}
