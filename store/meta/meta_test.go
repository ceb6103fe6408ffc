package meta

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/runnelmq/runnel/topicconf"
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
	c := topicconf.Config{TopicName: "T", ReadQueueNums: 4, WriteQueueNums: 4, Perm: topicconf.PermRead | topicconf.PermWrite, TopicFilterType: "SINGLE_TAG", Order: true}
	// A config without attributes is stored as before they were kept, so
	// a store written then reads the same.
	b, err := EncodeTopic(&c)
	if err != nil {
		t.Fatal(err)
	}
	const before = `{"topicName":"T","readQueueNums":4,"writeQueueNums":4,"perm":6,"topicFilterType":"SINGLE_TAG","topicSysFlag":0,"order":true}`
	if string(b) != before {
		t.Fatalf("json %s, want %s", b, before)
	}
	if got, err := DecodeTopic([]byte(before)); err != nil || !reflect.DeepEqual(got, c) {
		t.Fatal(got, err)
	}
	withAttrs := c
	withAttrs.Attributes = map[string]string{topicconf.AttributeMessageType: "FIFO"}
	if b, err = EncodeTopic(&withAttrs); err != nil {
		t.Fatal(err)
	}
	if got, err := DecodeTopic(b); err != nil || !reflect.DeepEqual(got, withAttrs) {
		t.Fatalf("attributes not kept: %s -> %+v, %v", b, got, err)
	}
	for _, bad := range []topicconf.Config{{}, {TopicName: "x", ReadQueueNums: -1}, {TopicName: "x", WriteQueueNums: 1 << 40}} {
		if err := ValidateTopic(&bad); !errors.Is(err, ErrInvalid) {
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
