package meta

import (
	"bytes"
	"errors"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestOffsetKeys(t *testing.T) {
	k := OffsetKey("group", "%RETRY%group", 3)
	g, tp, q, err := ParseOffsetKey(k)
	if err != nil || g != "group" || tp != "%RETRY%group" || q != 3 {
		t.Fatal(g, tp, q, err)
	}
	if !bytes.HasPrefix(k, OffsetGroupPrefix("group")) || bytes.HasPrefix(OffsetKey("groupX", "t", 0), OffsetGroupPrefix("group")) {
		t.Fatal("group prefix matches another group")
	}
	for _, bad := range [][]byte{{'M', 'O'}, {'M', 'O', 5, 'a'}, append(k, 0), {'M', 'T', 1}} {
		if _, _, _, err := ParseOffsetKey(bad); err == nil {
			t.Errorf("ParseOffsetKey(%x) accepted", bad)
		}
	}
}

func TestTopicConfig(t *testing.T) {
	c := TopicConfig{Name: "T", ReadQueueNums: 4, WriteQueueNums: 4, Perm: protocol.PermRead | protocol.PermWrite, TopicFilterType: "SINGLE_TAG", Order: true}
	b, err := EncodeTopic(&c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"topicName":"T"`)) || !bytes.Contains(b, []byte(`"perm":6`)) {
		t.Fatalf("json %s", b)
	}
	got, err := DecodeTopic(b)
	if err != nil || got != c {
		t.Fatal(got, err)
	}
	for _, bad := range []TopicConfig{{}, {Name: "x", ReadQueueNums: -1}} {
		if err := bad.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if _, err := DecodeInt64([]byte{1}); err == nil {
		t.Fatal("short int decoded")
	}
}

func TestDelayKeys(t *testing.T) {
	for _, level := range []int32{1, 18, 1 << 30} {
		got, err := ParseDelayKey(DelayKey(level))
		if err != nil || got != level {
			t.Fatalf("level %d: parsed %d, %v", level, got, err)
		}
	}
	if _, err := ParseDelayKey(CheckpointKey("abcd")); err == nil {
		t.Fatal("a checkpoint key parsed as a delay key")
	}
}
