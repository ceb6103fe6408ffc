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
		bad := append([]byte(nil), b...)
		bad[len(bad)-1] = 2 // order flag
		if _, _, err := DecodeTopicBinary(bad); !errors.Is(err, ErrInvalid) {
			t.Fatalf("order flag 2: %v", err)
		}
	}
}
