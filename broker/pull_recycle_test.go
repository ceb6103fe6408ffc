package broker

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// A pull's records go back to the store once its answer is written, a
// held pull's too, so the next pull reuses the buffer; and every answer
// still carries its own records (a reuse never reaches an answer not yet
// written: remoting's TestReleaseBodyOnlyAfterTheWrite is that contract).
func TestPullAnswersGiveTheirRecordsBack(t *testing.T) {
	b, rc := withTopic(t, "R", 1)
	body := bytes.Repeat([]byte("r"), 1000)
	for i := range 64 {
		copy(body, fmt.Sprintf("%02d", i))
		expect(t, rc.send("R", 0, "", string(body)), protocol.RespSuccess, "")
	}
	pull := func(off int64, flag int32) *protocol.Command {
		t.Helper()
		h := pullHeader("g", "R", 0, off, 32, protocol.PullFlagSubscription|flag)
		h.Subscription = "*"
		return rc.call(protocol.ReqPullMessage, h.Encode(), nil)
	}
	check := func(resp *protocol.Command, off int64, n int) {
		t.Helper()
		expect(t, resp, protocol.RespSuccess, "")
		msgs, err := message.DecodeMessages(resp.Body)
		if err != nil || len(msgs) != n {
			t.Fatalf("%v, %d messages", err, len(msgs))
		}
		for i, m := range msgs {
			if want := fmt.Sprintf("%02d", int(off)+i); string(m.Body[:2]) != want {
				t.Fatalf("message %d of the pull at %d says %q", i, off, m.Body[:2])
			}
		}
	}
	before := b.Store().Stats().Recycled
	const n = 50
	for i := range n {
		off := int64(i%2) * 32
		check(pull(off, 0), off, 32)
	}
	// A held pull, answered when a message arrives.
	type answer struct {
		resp *protocol.Command
		err  error
	}
	held := make(chan answer, 1)
	go func() {
		h := pullHeader("g", "R", 0, 64, 32, protocol.PullFlagSubscription|protocol.PullFlagSuspend)
		h.Subscription = "*"
		resp, err := rc.cl.Invoke(context.Background(), rc.addr, protocol.NewRequest(protocol.ReqPullMessage, h.Encode(), nil))
		held <- answer{resp, err}
	}()
	testwait.For(t, testwait.Default, "the pull held", func() bool { return b.core.HeldPulls() == 1 })
	copy(body, "64")
	expect(t, rc.send("R", 0, "", string(body)), protocol.RespSuccess, "")
	a := <-held
	if a.err != nil {
		t.Fatal(a.err)
	}
	check(a.resp, 64, 1)
	// The last answer's release may follow the client's read of it.
	testwait.For(t, testwait.Default, fmt.Sprintf("%d pulls to give their records back", n+1),
		func() bool { return b.Store().Stats().Recycled-before == n+1 })
}
