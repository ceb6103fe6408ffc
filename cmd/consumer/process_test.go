package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/runnelmq/runnel/integration/cluster"
)

// TestProcessPrintsExactlyWhatWasSent: the official producer's messages,
// keys, tags, properties and bodies (text and binary) come out of the
// binary in both formats, it stops at --max; without --group no group comes
// to exist, and with one the group's offsets are committed on exit,
// exactly the printed messages per queue.
func TestProcessPrintsExactlyWhatWasSent(t *testing.T) {
	const topic, n = "debug-orders", 12
	cl, prod := binaryCluster(t, topic, 4)
	msgs := produce(t, prod, topic, 0, n, "TagA", "TagB")

	t.Run("json", func(t *testing.T) {
		code, out, stderr := runConsumer(t, cl.NamesrvAddr(), "--topic", topic, "--from", "first", "--max", fmt.Sprint(n), "--format", "json")
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		recs := parseJSONLines(t, out)
		checkRecords(t, topic, recs, msgs)
		if !strings.Contains(stderr, "reached --max 12") || !strings.Contains(stderr, "no offsets committed (read without a group)") {
			t.Errorf("stderr:\n%s", stderr)
		}
		checkGroups(t, cl)
	})

	t.Run("text", func(t *testing.T) {
		code, out, stderr := runConsumer(t, cl.NamesrvAddr(), "--topic", topic, "--group", "debug-text", "--from", "first", "--max", fmt.Sprint(n))
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		if len(out) != 4*n {
			t.Fatalf("%d lines, want 4 per message:\n%s", len(out), strings.Join(out, "\n"))
		}
		printed := map[int]int64{}
		for i := 0; i < len(out); i += 4 {
			head := out[i]
			s := msgs[slices.IndexFunc(msgs, func(s sent) bool { return strings.Contains(head, " msgId="+s.msgID+" ") })]
			wantHead := fmt.Sprintf("topic=%s brokerName=%s queueId=%d queueOffset=%d msgId=%s offsetMsgId=", topic, cl.BrokerName(0), s.queueID, s.queueOffset, s.msgID)
			if !strings.HasPrefix(head, wantHead) {
				t.Errorf("head %q, want prefix %q", head, wantHead)
			}
			if want := fmt.Sprintf("  keys=[%s] tags=%s ", strings.Join(s.keys, " "), s.tag); !strings.HasPrefix(out[i+1], want) {
				t.Errorf("line %q, want prefix %q", out[i+1], want)
			}
			if !strings.Contains(out[i+2], " TAGS="+s.tag) || !strings.Contains(out[i+2], " seq=") {
				t.Errorf("properties line %q", out[i+2])
			}
			wantBody := fmt.Sprintf("  body (%d bytes): %s", len(s.body), s.body)
			if !isLineText(s.body) {
				wantBody = fmt.Sprintf("  body (%d bytes, quoted): %q", len(s.body), s.body)
			}
			if out[i+3] != wantBody {
				t.Errorf("body line %q, want %q", out[i+3], wantBody)
			}
			printed[s.queueID]++
		}
		if len(printed) != 4 {
			t.Errorf("messages from %d queues, want 4", len(printed))
		}
		checkCommitted(t, cl, "debug-text", topic, printed, 0)
	})

	// Fewer than there are: exactly --max printed, and with a group
	// exactly those committed even though four queues are consumed at once.
	for _, group := range []string{"", "debug-max"} {
		t.Run("max group="+group, func(t *testing.T) {
			code, out, stderr := runConsumer(t, cl.NamesrvAddr(), withGroup(group, "--topic", topic, "--from", "first", "--max", "5", "--format", "json")...)
			if code != 0 || len(out) != 5 {
				t.Fatalf("exit %d, %d lines, want 0 and 5; stderr:\n%s", code, len(out), stderr)
			}
			recs := parseJSONLines(t, out)
			checkRecords(t, topic, recs, filterSent(msgs, recs))
			if group != "" {
				checkCommitted(t, cl, group, topic, perQueue(recs), n-5)
			}
		})
	}
}

// TestProcessIdleTimeoutExitsCleanly: nothing to consume, exit 0 after the
// idle timeout with an empty stdout.
func TestProcessIdleTimeoutExitsCleanly(t *testing.T) {
	consumerBinary(t)
	cl := cluster.Start(t)
	createTopic(t, cl, "quiet", 2)
	start := time.Now()
	code, out, stderr := runConsumer(t, cl.NamesrvAddr(), "--topic", "quiet", "--from", "first", "--idle-timeout", "300ms")
	if code != 0 || len(out) != 0 {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "stopped (idle for 300ms) after 0 messages") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("took %v", el)
	}
}

// TestProcessSIGINTMidStream: SIGINT while messages are still arriving
// stops the binary with exit 0, and the group's committed offsets of every
// queue are exactly the messages it printed, including any it printed
// while stopping.
func TestProcessSIGINTMidStream(t *testing.T) {
	const topic = "stream"
	cl, prod := binaryCluster(t, topic, 4)
	produce(t, prod, topic, 0, 10, "TagA")

	p := startConsumer(t, cl.NamesrvAddr(), "--topic", topic, "--group", "debug-stream", "--from", "first", "--format", "json")
	var lines []string
	for range 5 {
		lines = append(lines, p.next(30*time.Second))
	}
	// Keep producing while the signal arrives.
	stopProducing := make(chan struct{})
	produced := make(chan int)
	go func() {
		i := 10
		defer func() { produced <- i }()
		for {
			select {
			case <-stopProducing:
				return
			default:
			}
			msg := primitive.NewMessage(topic, []byte(fmt.Sprint("late ", i))).WithTag("TagA")
			if _, err := prod.SendSync(context.Background(), msg); err != nil {
				return
			}
			i++
			time.Sleep(2 * time.Millisecond)
		}
	}()
	lines = append(lines, p.next(30*time.Second))
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code, rest := p.wait(30 * time.Second)
	close(stopProducing)
	total := <-produced
	if code != 0 {
		t.Fatalf("exit %d after SIGINT; stderr:\n%s", code, p.stderr())
	}
	lines = append(lines, rest...)
	recs := parseJSONLines(t, lines)
	if !strings.Contains(p.stderr(), "stopped (interrupted)") {
		t.Errorf("stderr:\n%s", p.stderr())
	}
	t.Logf("printed %d of %d messages before stopping", len(recs), total)
	checkCommitted(t, cl, "debug-stream", topic, perQueue(recs), int64(total-len(recs)))
}

// TestProcessTagFilter: only messages whose tag is in the expression are
// printed, and the filtered ones do not count as lag.
func TestProcessTagFilter(t *testing.T) {
	const topic = "tagged"
	cl, prod := binaryCluster(t, topic, 2)
	msgs := produce(t, prod, topic, 0, 9, "TagA", "TagB", "TagC")
	var want []sent
	for _, s := range msgs {
		if s.tag != "TagB" {
			want = append(want, s)
		}
	}
	code, out, stderr := runConsumer(t, cl.NamesrvAddr(), "--topic", topic, "--from", "first", "--tag", "TagA || TagC",
		"--format", "json", "--idle-timeout", "1s")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	checkRecords(t, topic, parseJSONLines(t, out), want)
}

// TestProcessFromLast: --from last prints only what is sent after the
// consumer started, although the queues still hold their first messages
// (where brokers start new groups at 0), with a new group or none.
func TestProcessFromLast(t *testing.T) {
	const topic = "fresh"
	cl, prod := binaryCluster(t, topic, 2)
	produce(t, prod, topic, 0, 4, "old")
	for i, tc := range []struct{ group, started string }{{"", "consumer: reading"}, {"debug-fresh", "consumer: consuming"}} {
		p := startConsumer(t, cl.NamesrvAddr(), withGroup(tc.group, "--topic", topic, "--max", "3", "--format", "json")...)
		p.waitStderr(tc.started, 30*time.Second)
		late := produce(t, prod, topic, 4+3*i, 3, "new")
		code, out := p.wait(30 * time.Second)
		if code != 0 {
			t.Fatalf("group %q: exit %d; stderr:\n%s", tc.group, code, p.stderr())
		}
		checkRecords(t, topic, parseJSONLines(t, out), late)
	}
}

// TestProcessWaitsForTopic: a consumer started before its topic exists
// says so once, waits, and prints what the producer that creates the topic
// sends (issue 38: it exited at once with "No topic route info"), with a
// group or without.
func TestProcessWaitsForTopic(t *testing.T) {
	consumerBinary(t)
	cl := cluster.Start(t)
	prod := officialProducer(t, cl)
	for _, group := range []string{"", "debug-later"} {
		t.Run("group="+group, func(t *testing.T) {
			topic := "later"
			if group != "" {
				topic = "later-g"
			}
			p := startConsumer(t, cl.NamesrvAddr(), withGroup(group, "--topic", topic, "--max", "3", "--format", "json")...)
			const waiting = "does not exist yet; waiting for it"
			p.waitStderr(waiting, 30*time.Second)
			// The first send creates the topic (autoCreateTopicEnable).
			sent := produce(t, prod, topic, 0, 3, "TagA")
			code, out := p.wait(60 * time.Second)
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, p.stderr())
			}
			checkRecords(t, topic, parseJSONLines(t, out), sent)
			if n := strings.Count(p.stderr(), waiting); n != 1 {
				t.Errorf("said %d times that the topic does not exist:\n%s", n, p.stderr())
			}
			if !strings.Contains(p.stderr(), "topic "+topic+" appeared") {
				t.Errorf("stderr:\n%s", p.stderr())
			}
		})
	}
	// Stopped while waiting: a clean stop, nothing printed.
	code, out, stderr := runConsumer(t, cl.NamesrvAddr(), "--topic", "never", "--idle-timeout", "300ms")
	if code != 0 || len(out) != 0 || !strings.Contains(stderr, "stopped (idle for 300ms) after 0 messages") {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, out, stderr)
	}
	checkGroups(t, cl, "debug-later")
}

// TestProcessErrors: bad input ends with exit 1 and one line on stderr.
func TestProcessErrors(t *testing.T) {
	consumerBinary(t)
	cl := cluster.Start(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--topic", "x", "--group", "no spaces"}, `--group "no spaces"`},
		{[]string{"--topic", "x", "--format", "yaml"}, `--output "yaml"`},
		{[]string{"--max", "3"}, "--topic is required"},
	} {
		code, out, stderr := runConsumer(t, cl.NamesrvAddr(), tc.args...)
		last := strings.TrimSpace(stderr)
		if i := strings.LastIndexByte(last, '\n'); i >= 0 {
			last = last[i+1:]
		}
		if code != 1 || len(out) != 0 || !strings.HasPrefix(last, "consumer: ") || !strings.Contains(last, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\nwant exit 1 and a last line with %q", tc.args, code, out, stderr, tc.want)
		}
		if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
			t.Errorf("%v: stderr looks like a panic:\n%s", tc.args, stderr)
		}
	}
}
