package core

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/groupconf"
)

// fifoCore is a core with a FIFO group "fifo" (retryMaxTimes 3) and a
// one-queue topic F holding messages 0..n-1.
func fifoCore(t *testing.T, n int) *testCore {
	t.Helper()
	c := openCore(t, nil)
	g := groupconf.New("fifo")
	g.ConsumeMessageOrderly, g.RetryMaxTimes = true, 3
	if err := c.UpdateGroup(g, "test"); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		sendBody(t, c, "F", 0, fmt.Sprint(i))
	}
	return c
}

func fifoPop(n int, attempt string) PopRequest {
	r := popReq("fifo", "F", n, time.Minute)
	r.AttemptID = attempt
	return r
}

// inOrder is the popped bodies with attempts, in delivery order.
func inOrder(ps []Popped) string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s#%d", p.Message.Body, p.DeliveryAttempt))
	}
	return strings.Join(out, " ")
}

// TestFIFOOneBatchAtATime: a FIFO group's queue gives its next batch only
// once the one in flight is acknowledged, in order; the offset commits as
// the acknowledgements allow.
func TestFIFOOneBatchAtATime(t *testing.T) {
	c := fifoCore(t, 5)
	first := mustPop(t, c, fifoPop(3, "a1"))
	if got := inOrder(first.Messages); got != "0#1 1#1 2#1" || !first.Orderly {
		t.Fatalf("first batch %s (orderly %v)", got, first.Orderly)
	}
	if res := mustPop(t, c, fifoPop(3, "a2")); res.Status != PopNoNewMessage {
		t.Fatalf("a second batch while the first is in flight: %s", inOrder(res.Messages))
	}
	// Acknowledged out of order: the offset waits for the first message.
	if err := c.Ack("fifo", "F", first.Messages[1].Handle); err != nil {
		t.Fatal(err)
	}
	if off, _ := c.ConsumerOffset("fifo", "F", 0); off != 0 {
		t.Fatalf("committed %d past a message not acknowledged", off)
	}
	for _, i := range []int{0, 2} {
		if err := c.Ack("fifo", "F", first.Messages[i].Handle); err != nil {
			t.Fatal(err)
		}
	}
	if off, _ := c.ConsumerOffset("fifo", "F", 0); off != 3 {
		t.Fatalf("committed %d after the batch, want 3", off)
	}
	if got := inOrder(mustPop(t, c, fifoPop(3, "a3")).Messages); got != "3#1 4#1" {
		t.Fatalf("second batch %s", got)
	}
}

// TestFIFOSameAttemptSameBatch: a pop again with the batch's attempt id
// gets the same batch (new handles, the attempt not counted again); one
// with another id gets nothing while the batch is invisible.
func TestFIFOSameAttemptSameBatch(t *testing.T) {
	c := fifoCore(t, 4)
	first := mustPop(t, c, fifoPop(2, "attempt-1"))
	again := mustPop(t, c, fifoPop(2, "attempt-1"))
	if got := inOrder(again.Messages); got != inOrder(first.Messages) || got != "0#1 1#1" {
		t.Fatalf("same attempt: %s, first %s", got, inOrder(first.Messages))
	}
	if again.Messages[0].Handle == first.Messages[0].Handle {
		t.Fatal("the retried attempt got the old handles")
	}
	wantReason(t, c.Ack("fifo", "F", first.Messages[0].Handle), InvalidReceipt)
	if res := mustPop(t, c, fifoPop(2, "attempt-2")); res.Status != PopNoNewMessage {
		t.Fatalf("another attempt got %s", inOrder(res.Messages))
	}
}

// TestFIFORedeliveredInOrderThenDLQ: a batch not acknowledged in time is
// delivered again, in order, its attempt counted; a message acknowledged
// meanwhile is not delivered again; past the group's max attempts a
// message goes to the %DLQ% and the queue moves on.
func TestFIFORedeliveredInOrderThenDLQ(t *testing.T) {
	c := fifoCore(t, 3)
	first := mustPop(t, c, fifoPop(3, ""))
	if err := c.Ack("fifo", "F", first.Messages[1].Handle); err != nil {
		t.Fatal(err)
	}
	c.advance(t, time.Minute)
	if got := inOrder(mustPop(t, c, fifoPop(3, "")).Messages); got != "0#2 2#2" {
		t.Fatalf("redelivered %s, want 0#2 2#2", got)
	}
	c.advance(t, time.Minute)
	third := mustPop(t, c, fifoPop(3, ""))
	if got := inOrder(third.Messages); got != "0#3 2#3" {
		t.Fatalf("third delivery %s", got)
	}
	// A change of invisible time moves the batch's visibility: nothing
	// comes before it; the old handle is refused.
	c.advance(t, time.Second)
	h, err := c.ChangeInvisible("fifo", "F", third.Messages[0].Handle, 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	wantReason(t, c.Ack("fifo", "F", third.Messages[0].Handle), InvalidReceipt)
	c.advance(t, time.Minute)
	if res := mustPop(t, c, fifoPop(3, "")); res.Status != PopNoNewMessage {
		t.Fatalf("popped %s while a changed message is invisible", inOrder(res.Messages))
	}
	c.advance(t, 4*time.Minute)
	if _, err := c.ChangeInvisible("fifo", "F", h, time.Minute); err == nil {
		t.Fatal("a handle whose time passed was changed")
	}
	if got := inOrder(mustPop(t, c, fifoPop(3, "")).Messages); got != "0#4 2#4" {
		t.Fatalf("fourth delivery %s", got)
	}
	c.advance(t, time.Minute)
	// Max attempts is 4 (retryMaxTimes 3 + 1): both go to the DLQ, the
	// offset passes them.
	if res := mustPop(t, c, fifoPop(3, "")); res.Status != PopNoNewMessage {
		t.Fatalf("a fifth delivery: %s", inOrder(res.Messages))
	}
	if off, _ := c.ConsumerOffset("fifo", "F", 0); off != 3 {
		t.Fatalf("committed %d, want 3 past the dead letters", off)
	}
	dlq := mustPop(t, c, popReq("reader", "%DLQ%fifo", 32, time.Minute))
	if got := bodiesOf(dlq.Messages); strings.Join(got, " ") != "0#5 2#5" {
		t.Fatalf("dead letters %v", got)
	}
}

// TestForwardToDLQ: a message forwarded by its handle goes to the %DLQ%
// at once and is acknowledged; a FIFO queue then moves on.
func TestForwardToDLQ(t *testing.T) {
	c := fifoCore(t, 2)
	first := mustPop(t, c, fifoPop(1, ""))
	if err := c.ForwardToDLQ("fifo", "F", first.Messages[0].Handle); err != nil {
		t.Fatal(err)
	}
	wantReason(t, c.ForwardToDLQ("fifo", "F", first.Messages[0].Handle), InvalidReceipt)
	if got := inOrder(mustPop(t, c, fifoPop(1, "")).Messages); got != "1#1" {
		t.Fatalf("after the forward %s", got)
	}
	sendBody(t, c, "P", 0, "plain")
	p := mustPop(t, c, popReq("g", "P", 1, time.Minute))
	if err := c.ForwardToDLQ("g", "P", p.Messages[0].Handle); err != nil {
		t.Fatal(err)
	}
	c.advance(t, time.Hour)
	if res := mustPop(t, c, popReq("g", "P", 1, time.Minute)); res.Status != PopNoNewMessage {
		t.Fatalf("a forwarded message came back: %v", bodiesOf(res.Messages))
	}
	for group, want := range map[string]string{"fifo": "0#2", "g": "plain#2"} {
		dlq := mustPop(t, c, popReq("reader", "%DLQ%"+group, 32, time.Minute))
		if got := bodiesOf(dlq.Messages); strings.Join(got, " ") != want {
			t.Fatalf("%s's dead letters %v, want %s", group, got, want)
		}
	}
}

// TestFIFOHeldPopWokenByAck: a FIFO pop held on a blocked queue is
// answered with the next batch once the batch in flight is acknowledged.
func TestFIFOHeldPopWokenByAck(t *testing.T) {
	c := fifoCore(t, 2)
	first := mustPop(t, c, fifoPop(1, ""))
	done := holdPop(t, c, fifoPop(1, ""))
	if err := c.Ack("fifo", "F", first.Messages[0].Handle); err != nil {
		t.Fatal(err)
	}
	if got := inOrder(waitPop(t, done, "the ack").Messages); got != "1#1" {
		t.Fatalf("woken with %s", got)
	}
}
