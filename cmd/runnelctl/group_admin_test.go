package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"
)

// TestGroupDeleteAndClone: a group that consumed (offsets committed, a
// %RETRY% topic) has its offsets cloned to a new group, then is deleted:
// its offsets and retry topic go, and the group list no longer shows it
// once its consumer has gone.
func TestGroupDeleteAndClone(t *testing.T) {
	cl, env := onCluster(t)
	ctl := ctlWith(t, env)
	okRun(t, env, "", "topic", "create", "gd", "--queues", "2")
	if r := ctl("send", "--topic", "gd", "a", "b", "c", "d"); r.code != 0 {
		t.Fatalf("send: %+v", r)
	}
	cons, _, got := pushConsumer(t, cl.NamesrvAddr(), "gd-consumer", "gd-old", "gd", 4)
	select {
	case <-got:
	case <-time.After(20 * time.Second):
		t.Fatal("the group did not consume the 4 messages")
	}
	b := cl.Broker(0)
	committed := func(group string) int64 {
		var sum int64
		for q := range int32(2) {
			if off, ok := b.ConsumerOffset(group, "gd", q); ok {
				sum += off
			}
		}
		return sum
	}
	testwait.For(t, 10*time.Second, "the old group's offsets at 4", func() bool { return committed("gd-old") == 4 })
	_ = cons.Shutdown(context.Background())

	if r := ctl("group", "clone-offset", "--src", "gd-old", "--dest", "gd-new"); r.code != 0 {
		t.Fatalf("clone-offset: %+v", r)
	}
	if n := committed("gd-new"); n != 4 {
		t.Fatalf("the new group's offsets sum to %d, want 4", n)
	}
	// The mqadmin name does the same.
	if r := ctl("cloneGroupOffset", "-s", "gd-old", "--destGroup", "gd-third", "-t", "gd"); r.code != 0 || committed("gd-third") != 4 {
		t.Fatalf("cloneGroupOffset: %+v, offsets %d", r, committed("gd-third"))
	}

	r := ctl("group", "delete", "--group", "gd-old", "--yes")
	if r.code != 0 || !strings.Contains(r.stderr, "%RETRY%gd-old") || !strings.Contains(r.stdout, "deleted") {
		t.Fatalf("group delete: %+v", r)
	}
	if _, ok := b.ConsumerOffset("gd-old", "gd", 0); ok {
		t.Fatal("the deleted group's offsets are still there")
	}
	if _, ok := b.Core().Topic("%RETRY%gd-old"); ok {
		t.Fatal("the deleted group's retry topic is still there")
	}
	if r := ctl("group", "list", "-o", "json"); r.code != 0 || strings.Contains(r.stdout, `"gd-old"`) || !strings.Contains(r.stdout, `"gd-new"`) {
		t.Fatalf("group list after the delete: %+v", r)
	}
	// The offsets are gone from the store too: they do not come back with
	// a restart.
	cl.RestartBroker(0)
	if _, ok := cl.Broker(0).ConsumerOffset("gd-old", "gd", 0); ok {
		t.Fatal("the deleted group's offsets came back after a restart")
	}
	if r := ctl("group", "delete", "--group", "bad group", "--yes"); r.code == 0 {
		t.Fatalf("a bad group name was accepted: %+v", r)
	}
}
