package integration

import (
	"fmt"
	"io"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"
)

// pullV5 runs one PullMessage and returns its status, messages and next
// offset.
func pullV5(t testing.TB, r rawV5, req *v2.PullMessageRequest) (*v2.Status, []*v2.Message, int64) {
	t.Helper()
	s, err := r.PullMessage(r.ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	var st *v2.Status
	var msgs []*v2.Message
	next := int64(-1)
	for {
		resp, err := s.Recv()
		if err == io.EOF {
			return st, msgs, next
		}
		if err != nil {
			t.Fatalf("pull: %v", err)
		}
		switch c := resp.GetContent().(type) {
		case *v2.PullMessageResponse_Status:
			st = c.Status
		case *v2.PullMessageResponse_Message:
			msgs = append(msgs, c.Message)
		case *v2.PullMessageResponse_NextOffset:
			next = c.NextOffset
		}
	}
}

// TestV5PullAndOffsets: beyond the Java proxy, which answers them
// UNIMPLEMENTED, the door serves PullMessage (a held pull woken by a
// send), UpdateOffset, GetOffset and QueryOffset over the core's pulls
// and the group's committed offsets.
func TestV5PullAndOffsets(t *testing.T) {
	c := startV5(t)
	createTopic(t, c, 0, "V5Pull", 1)
	r := dialV5(t, c, 0, false)
	for i := range 5 {
		resp, err := r.SendMessage(r.ctx(t), &v2.SendMessageRequest{Messages: []*v2.Message{rawMessage("V5Pull", v2.MessageType_NORMAL, fmt.Sprint(i))}})
		wantCode(t, "send", resp.GetStatus(), err, v2.Code_OK)
	}
	mq := &v2.MessageQueue{Topic: &v2.Resource{Name: "V5Pull"}, Id: 0}
	group := &v2.Resource{Name: "v5-pull-group"}
	st, msgs, next := pullV5(t, r, &v2.PullMessageRequest{Group: group, MessageQueue: mq, Offset: 0, BatchSize: 3,
		FilterExpression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}})
	if st.GetCode() != v2.Code_OK || len(msgs) != 3 || next != 3 || string(msgs[0].GetBody()) != "0" ||
		msgs[2].GetSystemProperties().GetQueueOffset() != 2 {
		t.Fatalf("pull from 0: %v, %d messages, next %d", st, len(msgs), next)
	}

	up, err := r.UpdateOffset(r.ctx(t), &v2.UpdateOffsetRequest{Group: group, MessageQueue: mq, Offset: next})
	wantCode(t, "update offset", up.GetStatus(), err, v2.Code_OK)
	got, err := r.GetOffset(r.ctx(t), &v2.GetOffsetRequest{Group: group, MessageQueue: mq})
	wantCode(t, "get offset", got.GetStatus(), err, v2.Code_OK)
	if got.GetOffset() != 3 {
		t.Fatalf("committed offset %d, want 3", got.GetOffset())
	}
	none, err := r.GetOffset(r.ctx(t), &v2.GetOffsetRequest{Group: &v2.Resource{Name: "never-committed"}, MessageQueue: mq})
	wantCode(t, "offset of a group that committed none", none.GetStatus(), err, v2.Code_OFFSET_NOT_FOUND)
	for policy, want := range map[v2.QueryOffsetPolicy]int64{v2.QueryOffsetPolicy_BEGINNING: 0, v2.QueryOffsetPolicy_END: 5} {
		q, err := r.QueryOffset(r.ctx(t), &v2.QueryOffsetRequest{MessageQueue: mq, QueryOffsetPolicy: policy})
		wantCode(t, "query offset", q.GetStatus(), err, v2.Code_OK)
		if q.GetOffset() != want {
			t.Fatalf("%v offset %d, want %d", policy, q.GetOffset(), want)
		}
	}

	// A pull at the end is held, and woken by the next send.
	woken := make(chan []*v2.Message, 1)
	go func() {
		_, msgs, _ := pullV5(t, r, &v2.PullMessageRequest{Group: group, MessageQueue: mq, Offset: 5, BatchSize: 1,
			LongPollingTimeout: durationpb.New(8 * time.Second)})
		woken <- msgs
	}()
	time.Sleep(300 * time.Millisecond)
	resp, err := r.SendMessage(r.ctx(t), &v2.SendMessageRequest{Messages: []*v2.Message{rawMessage("V5Pull", v2.MessageType_NORMAL, "late")}})
	wantCode(t, "send", resp.GetStatus(), err, v2.Code_OK)
	select {
	case msgs := <-woken:
		if len(msgs) != 1 || string(msgs[0].GetBody()) != "late" {
			t.Fatalf("held pull answered %d messages", len(msgs))
		}
	case <-time.After(6 * time.Second):
		t.Fatal("the held pull was not woken by the send")
	}
}
