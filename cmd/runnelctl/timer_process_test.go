package main

import (
	"strconv"
	"testing"
	"time"
)

// testTimerSend sends timer messages with --delay 1500ms and
// --deliver-at: each waits in the timer topic with its real topic and due
// time, and arrives in its topic no sooner than that time.
func testTimerSend(t *testing.T, c ctl) {
	c.ok("", "topic", "create", "timers", "--queues", "1")
	for _, deliverAt := range []bool{false, true} {
		before := time.Now().Truncate(time.Millisecond)
		at := before.Add(1200 * time.Millisecond)
		args := []string{"--delay", "1500ms", "after"}
		if deliverAt {
			args = []string{"--deliver-at", at.Format(time.RFC3339Nano), "at"}
		}
		r := c.run("", append([]string{"send", "--topic", "timers", "-o", "json"}, args...)...)
		if r.code != 0 {
			t.Fatalf("send %v: %+v", args, r)
		}
		sent := parseSent(t, r.stdout)
		var waiting messageView
		c.okJSON(&waiting, "message", "get", sent[0].OffsetMsgID)
		due, err := strconv.ParseInt(waiting.Properties["TIMER_OUT_MS"], 10, 64)
		if waiting.Topic != "rmq_sys_wheel_timer" || waiting.Properties["REAL_TOPIC"] != "timers" || err != nil {
			t.Fatalf("the stored copy of a send with %v: %+v", args, waiting)
		}
		want := before.Add(1500 * time.Millisecond).UnixMilli()
		if deliverAt {
			want = at.UnixMilli()
		}
		if due < want || due > want+5000 {
			t.Fatalf("send %v: due at %d, want %d", args, due, want)
		}
		delivered := c.delivered(sent[0].MsgID, "timers")
		if delivered.StoreTimestamp < due || delivered.Properties["TIMER_OUT_MS"] != "" || *delivered.Body != args[2] {
			t.Fatalf("delivered copy of %v (due %d): %+v", args, due, delivered)
		}
	}
}
