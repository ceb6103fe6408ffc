package meta

import (
	"errors"
	"reflect"
	"testing"

	"github.com/runnelmq/runnel/topicconf"
)

func TestTopicBinaryRoundTrips(t *testing.T) {
	for _, c := range []topicconf.Config{
		{},
		{TopicName: "T", ReadQueueNums: 4, WriteQueueNums: 8, Perm: 6, TopicFilterType: "SINGLE_TAG", TopicSysFlag: -1, Order: true},
		{TopicName: "F", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6, Attributes: map[string]string{"message.type": "FIFO", "a": ""}},
	} {
		b := AppendTopicBinary([]byte{9}, &c)[1:]
		got, n, err := DecodeTopicBinary(append(b, 7))
		if err != nil || n != len(b) || !reflect.DeepEqual(got, c) {
			t.Fatalf("%+v: decoded %+v, %d of %d bytes, %v", c, got, n, len(b), err)
		}
		for i := 0; i < len(b); i++ {
			if _, _, err := DecodeTopicBinary(b[:i]); !errors.Is(err, ErrInvalid) {
				t.Fatalf("%+v cut to %d bytes: %v", c, i, err)
			}
		}
		if c.Attributes != nil {
			continue
		}
		bad := append([]byte(nil), b...)
		bad[len(bad)-1] = 4 // an unknown flag
		if _, _, err := DecodeTopicBinary(bad); !errors.Is(err, ErrInvalid) {
			t.Fatalf("flag 4: %v", err)
		}
	}
	// A config without attributes keeps the bytes it had before they
	// were carried.
	c := topicconf.Config{TopicName: "T", ReadQueueNums: 4, WriteQueueNums: 8, Perm: 6, TopicFilterType: "SINGLE_TAG", Order: true}
	if got := AppendTopicBinary(nil, &c); string(got) != "\x01T\x08\x10\x0c\nSINGLE_TAG\x00\x01" {
		t.Fatalf("binary %q", got)
	}
	// Attributes out of order, twice, or a flag with none, are refused.
	two := topicconf.Config{TopicName: "T", Attributes: map[string]string{"a": "1", "b": "2"}}
	enc := AppendTopicBinary(nil, &two)
	swapped := append([]byte(nil), enc...)
	swapped[len(swapped)-6], swapped[len(swapped)-3] = 'b', 'a'
	empty := append(AppendTopicBinary(nil, &topicconf.Config{TopicName: "T"})[:7:7], 2, 0)
	for _, bad := range [][]byte{swapped, empty} {
		if _, _, err := DecodeTopicBinary(bad); !errors.Is(err, ErrInvalid) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}
