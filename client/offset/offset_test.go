package offset

import (
	"errors"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client/queue"
)

var (
	mqA = queue.MessageQueue{Topic: "T", BrokerName: "b1", QueueID: 0}
	mqB = queue.MessageQueue{Topic: "T", BrokerName: "b1", QueueID: 1}
	mqC = queue.MessageQueue{Topic: "U", BrokerName: "b2", QueueID: 0}
)

func TestTableIncreaseOnly(t *testing.T) {
	var tb Table
	if _, ok := tb.Get(mqA); ok {
		t.Fatal("empty table has an offset")
	}
	steps := []struct {
		off          int64
		increaseOnly bool
		want         int64
		changed      bool
	}{
		{10, true, 10, true}, // first value is set even when increaseOnly
		{5, true, 10, false}, // no rewind
		{10, true, 10, false},
		{12, true, 12, true},
		{3, false, 3, true}, // explicit reset
	}
	for _, st := range steps {
		if changed := tb.Update(mqA, st.off, st.increaseOnly); changed != st.changed {
			t.Fatalf("Update(%d, %v) changed = %v, want %v", st.off, st.increaseOnly, changed, st.changed)
		}
		if got, _ := tb.Get(mqA); got != st.want {
			t.Fatalf("after Update(%d, %v): %d, want %d", st.off, st.increaseOnly, got, st.want)
		}
	}
	tb.Update(mqC, 7, false)
	if s := tb.Snapshot("U"); len(s) != 1 || s[mqC] != 7 {
		t.Fatalf("Snapshot(U) = %v", s)
	}
	if s := tb.Snapshot(""); len(s) != 2 {
		t.Fatalf("Snapshot(all) = %v", s)
	}
	tb.Remove(mqA)
	if _, ok := tb.Get(mqA); ok {
		t.Fatal("Remove kept the offset")
	}
}

func TestPlanStart(t *testing.T) {
	retry := queue.MessageQueue{Topic: queue.RetryGroupTopicPrefix + "g", BrokerName: "b", QueueID: 0}
	tests := []struct {
		from   ConsumeFrom
		stored int64
		mq     queue.MessageQueue
		want   Start
	}{
		{ConsumeFromLastOffset, 42, mqA, Start{StartAtOffset, 42}},
		{ConsumeFromFirstOffset, 0, mqA, Start{StartAtOffset, 0}},
		{ConsumeFromTimestamp, 7, retry, Start{StartAtOffset, 7}},
		{ConsumeFromLastOffset, NoOffset, mqA, Start{Kind: StartAtMaxOffset}},
		{ConsumeFromLastOffset, NoOffset, retry, Start{StartAtOffset, 0}},
		{ConsumeFromFirstOffset, NoOffset, mqA, Start{StartAtOffset, 0}},
		{ConsumeFromFirstOffset, NoOffset, retry, Start{StartAtOffset, 0}},
		{ConsumeFromTimestamp, NoOffset, mqA, Start{Kind: StartAtTimestamp}},
		{ConsumeFromTimestamp, NoOffset, retry, Start{Kind: StartAtMaxOffset}},
	}
	for _, tt := range tests {
		got, err := PlanStart(tt.from, tt.stored, tt.mq)
		if err != nil || got != tt.want {
			t.Errorf("PlanStart(%d, %d, %s) = %+v, %v; want %+v", tt.from, tt.stored, tt.mq.Topic, got, err, tt.want)
		}
	}
	if _, err := PlanStart(ConsumeFromLastOffset, -2, mqA); !errors.Is(err, ErrBadStoredOffset) {
		t.Errorf("stored -2: err = %v, want ErrBadStoredOffset", err)
	}
	if _, err := PlanStart(ConsumeFrom(9), NoOffset, mqA); err == nil {
		t.Error("unknown ConsumeFrom accepted")
	}
}

func TestConsumeTimestamp(t *testing.T) {
	loc := time.FixedZone("X", 8*3600)
	got, err := ParseConsumeTimestamp("20260102030405", loc)
	if err != nil || !got.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, loc)) {
		t.Fatalf("Parse = %v, %v", got, err)
	}
	if _, err := ParseConsumeTimestamp("2026-01-02", loc); err == nil {
		t.Fatal("bad timestamp accepted")
	}
	now := time.Date(2026, 1, 2, 0, 10, 0, 0, time.UTC)
	if got := DefaultConsumeTimestamp(now); got != "20260101234000" {
		t.Fatalf("DefaultConsumeTimestamp = %q", got)
	}
}
