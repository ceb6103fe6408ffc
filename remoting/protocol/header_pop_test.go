package protocol

import (
	"reflect"
	"slices"
	"testing"
)

// TestPopHeadersAsJavaSendsThem decodes extFields as a Java 5 client
// sends them: every @CFNotNull field, order as "false", no exp.
func TestPopHeadersAsJavaSendsThem(t *testing.T) {
	var h PopMessageRequestHeader
	err := h.Decode(map[string]string{"consumerGroup": "g", "topic": "T", "queueId": "-1", "maxMsgNums": "32",
		"invisibleTime": "60000", "pollTime": "20000", "bornTime": "1700000000000", "initMode": "1", "order": "false"})
	want := PopMessageRequestHeader{ConsumerGroup: "g", Topic: "T", QueueID: -1, MaxMsgNums: 32, InvisibleTime: 60000,
		PollTime: 20000, BornTime: 1700000000000, InitMode: ConsumeInitModeMax}
	if err != nil || h != want {
		t.Fatalf("decoded %+v, %v", h, err)
	}
	if err := h.Decode(map[string]string{"consumerGroup": "g", "topic": "T"}); err == nil {
		t.Fatal("a pop without its required fields decoded")
	}
	var a AckMessageRequestHeader
	if err := a.Decode(map[string]string{"consumerGroup": "g", "topic": "T", "queueId": "1", "offset": "5"}); err == nil {
		t.Fatal("an ack without extraInfo decoded")
	}
}

func TestBatchAckBody(t *testing.T) {
	// What Java's BatchAckMessageRequestBody.encode writes for offsets
	// 101, 103 and 105 past 100 (BitSet bits 1, 3, 5: byte 0x2a).
	java := []byte(`{"acks":[{"b":"Kg==","c":"g","it":5000,"pt":1700000000000,"q":1,"r":"0","rq":2,"so":100,"t":"myTopic"}],"brokerName":"broker-a"}`)
	body, err := DecodeBatchAckBody(java)
	if err != nil {
		t.Fatal(err)
	}
	a := body.Acks[0]
	if body.BrokerName != "broker-a" || a.ConsumerGroup != "g" || a.Topic != "myTopic" || a.Retry != "0" || a.StartOffset != 100 ||
		a.QueueID != 1 || a.ReviveQueueID != 2 || a.PopTime != 1700000000000 || a.InvisibleTime != 5000 {
		t.Fatalf("decoded %+v", body)
	}
	if got := a.Offsets(); !slices.Equal(got, []int64{101, 103, 105}) {
		t.Fatalf("offsets %v", got)
	}
	long := []byte(`{"acks":[{"consumerGroup":"g","topic":"T","retry":"1","startOffset":7,"queueId":0,"bitSet":"AQ=="}]}`)
	if b, err := DecodeBatchAckBody(long); err != nil || b.Acks[0].Topic != "T" || !slices.Equal(b.Acks[0].Offsets(), []int64{7}) {
		t.Fatalf("long names: %+v, %v", b, err)
	}
	again, err := DecodeBatchAckBody(body.Encode())
	if err != nil || !reflect.DeepEqual(again, body) {
		t.Fatalf("round trip %+v, %v", again, err)
	}
	var set BatchAck
	set.StartOffset = 10
	set.SetOffsets([]int64{10, 17, 18})
	if got := set.Offsets(); !slices.Equal(got, []int64{10, 17, 18}) {
		t.Fatalf("SetOffsets: %v", got)
	}
	for _, bad := range []string{``, `[]`, `{"acks":[{"b":"!"}]}`, `{"acks":[{"q":"x"}]}`} {
		if _, err := DecodeBatchAckBody([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

// FuzzDecodeBatchAckBody: the body decoder never panics, bounds the bits
// it takes, and what it accepts encodes to a body that decodes the same.
func FuzzDecodeBatchAckBody(f *testing.F) {
	f.Add([]byte(`{"acks":[{"b":"Kg==","c":"g","it":5000,"pt":1,"q":1,"r":"0","rq":2,"so":100,"t":"T"}],"brokerName":"b"}`))
	f.Add([]byte(`{"acks":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		body, err := DecodeBatchAckBody(b)
		if err != nil {
			return
		}
		for _, a := range body.Acks {
			if n := len(a.Offsets()); n > maxBatchAckBits {
				t.Fatalf("%d offsets", n)
			}
		}
		again, err := DecodeBatchAckBody(body.Encode())
		if err != nil {
			t.Fatalf("re-encoded body: %v", err)
		}
		for i := range body.Acks {
			if len(body.Acks[i].BitSet) == 0 {
				body.Acks[i].BitSet = nil
			}
			if len(again.Acks[i].BitSet) == 0 {
				again.Acks[i].BitSet = nil
			}
		}
		if !reflect.DeepEqual(again, body) {
			t.Fatalf("%+v re-decodes as %+v", body, again)
		}
	})
}
