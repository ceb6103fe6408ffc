package core

import (
	"context"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/message"
)

// reply runs Reply and returns its one answer.
func reply(t *testing.T, c *testCore, props map[string]string) (SendResult, error) {
	t.Helper()
	var (
		res   SendResult
		err   error
		calls int
	)
	c.Reply(SendRequest{
		ProducerGroup: "replier", Topic: "DefaultCluster_REPLY_TOPIC", QueueID: -1, MaxReconsumeTimes: -1,
		Messages: []SendMessage{{Properties: props, Body: []byte("answer")}},
	}, func(r SendResult, e error) { res, err = r, e; calls++ })
	if calls != 1 {
		t.Fatalf("Reply answered %d times", calls)
	}
	return res, err
}

// connectRequester connects the producer req@1 of group pg over channel 7:
// the requester a reply names.
func connectRequester(t *testing.T, c *testCore) *fakeChannel {
	t.Helper()
	requester := &fakeChannel{id: 7}
	if err := c.Heartbeat(requester, ClientMeta{}, Heartbeat{ClientID: "req@1", Producers: []string{"pg"}}); err != nil {
		t.Fatal(err)
	}
	return requester
}

func TestReplyPushedToRequesterAndStored(t *testing.T) {
	c := openCore(t, nil)
	requester := connectRequester(t, c)
	res, err := reply(t, c, map[string]string{
		message.PropertyCorrelationID: "cid-1", message.PropertyMessageReplyToClient: "req@1",
	})
	if err != nil {
		t.Fatalf("reply: %v", err)
	}
	if got := strings.Join(requester.notes, ";"); got != "reply cid-1" {
		t.Fatalf("requester got %q, want the pushed reply", got)
	}
	if res.MsgIDs[0] == "0" || c.Store().MaxOffset("DefaultCluster_REPLY_TOPIC", res.QueueID) != 1 {
		t.Fatalf("reply not stored: %+v", res)
	}
}

func TestReplyToVanishedRequesterRefusedAsJavaButStored(t *testing.T) {
	c := openCore(t, nil)
	requester := connectRequester(t, c)
	c.ChannelClosed(7)
	_, err := reply(t, c, map[string]string{message.PropertyMessageReplyToClient: "req@1"})
	reason, remark := reasonOf(err)
	if reason != NoClient || remark != "push reply message fail, channel of <req@1> not found." {
		t.Fatalf("got %v %q", reason, remark)
	}
	_, err = reply(t, c, map[string]string{})
	if reason, remark := reasonOf(err); reason != BadRequest || remark != "reply message properties[REPLY_TO_CLIENT] is null" {
		t.Fatalf("no REPLY_TO_CLIENT: got %v %q", reason, remark)
	}
	if n := c.Store().MaxOffset("DefaultCluster_REPLY_TOPIC", 0); n != 2 {
		t.Fatalf("stored %d replies, want 2 (storeReplyMessageEnable)", n)
	}
	if len(requester.notes) != 0 {
		t.Fatalf("closed requester was pushed to: %v", requester.notes)
	}
}

// refusingChannel is a requester that answers every push with an error.
type refusingChannel struct{ *fakeChannel }

func (r refusingChannel) PushReply(_ context.Context, _ PushedReply, done func(ClientReply, error)) error {
	done(ClientReply{Status: 1, Remark: "no"}, nil)
	return nil
}

func TestReplyPushRefusedByRequester(t *testing.T) {
	c := openCore(t, nil)
	if err := c.Heartbeat(refusingChannel{&fakeChannel{id: 9}}, ClientMeta{}, Heartbeat{
		ClientID: "req@2", Producers: []string{"pg"},
	}); err != nil {
		t.Fatal(err)
	}
	_, err := reply(t, c, map[string]string{message.PropertyMessageReplyToClient: "req@2"})
	if reason, remark := reasonOf(err); reason != NoClient || remark != "push reply message to req@2fail." {
		t.Fatalf("got %v %q, want Java's push failure", reason, remark)
	}
}
