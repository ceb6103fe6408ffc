package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// testTimerSend sends timer messages with --delay 1500ms and
// --deliver-at: each waits in the timer topic with its real topic and due
// time, and arrives in its topic no sooner than that time; once it has,
// message recall of its recall handle is refused by the broker.
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
		r = c.run("", "message", "recall", "--topic", "timers", "--handle", sent[0].RecallHandle)
		assertFailed(t, r, "refused: ILLEGAL_OPERATION: recall failed, timestamp invalid")
		if !strings.HasPrefix(r.stderr, "runnelctl: recall on timers: broker "+sent[0].Broker+" (") {
			t.Errorf("recall of a delivered message: %q, want the broker named", r.stderr)
		}
	}
}

// testTimerRecall sends a timer message due in an hour and recalls it
// with the handle send printed: recall answers its id, broker and due
// time, in a table or as JSON. A send that is not a timer's prints no
// handle.
func testTimerRecall(t *testing.T, c ctl) {
	c.ok("", "topic", "create", "recalls", "--queues", "1")
	out := c.ok("", "send", "--topic", "recalls", "--delay", "1h", "later")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !strings.HasSuffix(lines[0], " RECALL HANDLE") {
		t.Fatalf("send table of a timer message:\n%s", out)
	}
	if out := c.ok("", "send", "--topic", "recalls", "now"); strings.Contains(out, "RECALL HANDLE") {
		t.Fatalf("send table of a plain message shows a recall handle:\n%s", out)
	}
	for _, asJSON := range []bool{false, true} {
		before := time.Now().UnixMilli()
		sent := parseSent(t, c.ok("", "send", "--topic", "recalls", "--delay", "1h", "-o", "json", "later"))
		if sent[0].RecallHandle == "" {
			t.Fatalf("send -o json of a timer message: %+v, want a recallHandle", sent[0])
		}
		args := []string{"message", "recall", "--topic", "recalls", "--handle", sent[0].RecallHandle}
		if !asJSON {
			out := c.ok("", args...)
			if !strings.HasPrefix(out, "MSG ID") || !strings.Contains(out, sent[0].MsgID+"  recalls  "+sent[0].Broker+"  ") {
				t.Fatalf("recall table:\n%s", out)
			}
			continue
		}
		var r recallRow
		c.okJSON(&r, args...)
		hour := time.Hour.Milliseconds()
		if r.MsgID != sent[0].MsgID || r.Topic != "recalls" || r.Broker != sent[0].Broker || r.Due < before+hour || r.Due > time.Now().UnixMilli()+hour {
			t.Fatalf("recall -o json: %+v, want %s of %s due in an hour", r, sent[0].MsgID, sent[0].Broker)
		}
	}
}
