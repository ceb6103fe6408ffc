package store

import (
	"errors"
	"reflect"
	"testing"

	"github.com/runnelmq/runnel/groupconf"
	"github.com/runnelmq/runnel/store/meta"
)

// TestGroupConfigsPersist: group configs put through Apply (typed and
// encoded) are listed, survive a reopen, and a delete removes one.
func TestGroupConfigsPersist(t *testing.T) {
	s, clock, fs := openMem(t)
	g1 := groupconf.Config{GroupName: "g1", ConsumeEnable: false, RetryQueueNums: 1, RetryMaxTimes: 2}
	g2 := groupconf.Config{GroupName: "g2", ConsumeEnable: true, RetryMaxTimes: 16}
	if _, err := s.Apply(&Op{Kind: OpPutGroup, GroupConfig: &g1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplyEncoded((&Op{Kind: OpPutGroup, GroupConfig: &g2}).Marshal()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(&Op{Kind: OpPutGroup, GroupConfig: &groupconf.Config{}}); err == nil {
		t.Fatal("a group config without a name was accepted")
	}
	// The stored record once held Java's 32-bit ints and cut what was
	// wider; now the store refuses it.
	if _, err := s.Apply(&Op{Kind: OpPutGroup, GroupConfig: &groupconf.Config{GroupName: "wide", ConsumeTimeoutMinute: 1 << 32}}); !errors.Is(err, meta.ErrInvalid) {
		t.Fatalf("a group config beyond 32 bits: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(memOptions(fs, clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	got, err := s.Groups()
	if err != nil || !reflect.DeepEqual(got, []groupconf.Config{g1, g2}) {
		t.Fatalf("groups after reopen: %+v, %v", got, err)
	}
	if _, err := s.Apply(&Op{Kind: OpDeleteGroup, Group: "g1"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Groups(); !reflect.DeepEqual(got, []groupconf.Config{g2}) {
		t.Fatalf("groups after delete: %+v", got)
	}
}
