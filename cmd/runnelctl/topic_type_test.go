package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTopicTypes: topic create --type sets a topic's message type, which
// topic list --types and topic route show; a later create without it
// keeps it; an unknown type is refused before anything is sent.
func TestTopicTypes(t *testing.T) {
	_, env := onCluster(t)
	okRun(t, env, "", "topic", "create", "orders", "--type", "fifo")
	okRun(t, env, "", "topic", "create", "audit", "--queues", "2")
	okRun(t, env, "", "topic", "create", "orders", "--queues", "4")

	var rows []struct{ Topic, Type string }
	if err := json.Unmarshal([]byte(okRun(t, env, "", "topic", "list", "--types", "-o", "json").stdout), &rows); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rows {
		got[r.Topic] = r.Type
	}
	if got["orders"] != "FIFO" || got["audit"] != "NORMAL" {
		t.Fatalf("topic list --types: %+v", rows)
	}
	if out := okRun(t, env, "", "topic", "list", "--types").stdout; !strings.Contains(out, "TYPE") || !strings.Contains(out, "FIFO") {
		t.Fatalf("topic list --types:\n%s", out)
	}
	if out := okRun(t, env, "", "topic", "route", "orders").stdout; !strings.Contains(out, "TYPE") || !strings.Contains(out, "FIFO") {
		t.Fatalf("topic route:\n%s", out)
	}
	r := runCLI(t, env, "", "topic", "create", "bad", "--type", "LIFO")
	if r.code == 0 || !strings.Contains(r.stderr, "--type") {
		t.Fatalf("an unknown type: %+v", r)
	}
	r = runCLI(t, env, "", "topic", "create", "bad", "--type", "FIFO", "--attributes", "+message.type=FIFO")
	if r.code == 0 || !strings.Contains(r.stderr, "exclude") {
		t.Fatalf("--type with --attributes: %+v", r)
	}
}
