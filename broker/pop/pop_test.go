package pop

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/runnelmq/runnel/internal/roundtrip"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestHandleRoundTrips(t *testing.T) {
	for _, h := range []Handle{
		{CkOffset: 3, PopTime: 1767225600000, Invisible: 60000, ReviveQueue: PlainReviveQueue, TopicType: NormalTopic,
			BrokerName: "broker-a", QueueID: 2, QueueOffset: 5, CommitLogOffset: 1 << 33},
		{CkOffset: 0, PopTime: 1, Invisible: 0, ReviveQueue: OrderlyReviveQueue, TopicType: RetryTopicV1,
			BrokerName: "b", QueueID: 0, QueueOffset: 0, CommitLogOffset: -1},
	} {
		got, err := ParseHandle(h.String())
		if err != nil || got != h {
			t.Fatalf("ParseHandle(%q) = %+v, %v; want %+v", h.String(), got, err, h)
		}
	}
	// Java's remoting client builds eight fields; the proxy's nine.
	java := "12 1700000000000 60000 3 1 broker-a 1 14"
	h, err := ParseHandle(java)
	if err != nil || h.CommitLogOffset != -1 || h.ReviveQueue != 3 || h.TopicType != RetryTopicV1 || h.Orderly() || h.String() != java {
		t.Fatalf("ParseHandle(%q) = %+v, %v", java, h, err)
	}
	if h.Expiry() != 1700000060000 {
		t.Fatalf("expiry %d", h.Expiry())
	}
}

func TestParseHandleRefuses(t *testing.T) {
	for _, bad := range []string{
		"", " ", "1 2 3 0 0 b 1", "1 2 3 0 0 b 1 2 3 4", "1  2 3 0 0 b 1 2", "-1 2 3 0 0 b 1 2", "+1 2 3 0 0 b 1 2",
		"1 2 3 0 3 b 1 2", "1 2 3 998 0 b 1 2", "1 2 3 0 0  1 2", "1 2 3 0 0 b 4294967296 2", "x 2 3 0 0 b 1 2",
		"1 2 99999999999999999 0 0 b 1 2", "1 2 3 0 0 b 1 2 ", strings.Repeat("1", 600),
	} {
		if _, err := ParseHandle(bad); !errors.Is(err, ErrBadHandle) {
			t.Errorf("ParseHandle(%q) = %v, want ErrBadHandle", bad, err)
		}
	}
}

// FuzzParseHandle: ParseHandle never panics; what it accepts prints to a
// text it parses back to the same handle.
func FuzzParseHandle(f *testing.F) {
	for _, s := range []string{"12 1700000000000 60000 0 0 broker-a 1 14", "0 1 2 999 1 b 0 0 77", "1 2 3", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		roundtrip.Check(t, s, ParseHandle, Handle.String, ErrBadHandle, func(a, b Handle) bool { return a == b })
	})
}

func TestRecordRoundTrips(t *testing.T) {
	for _, r := range []Record{
		{},
		{PopTime: 1767225600000, InvisibleUntil: 1767225660000, CkOffset: 7, CommitLogOffset: 1 << 40},
		{Orderly: true, Acked: true, ReconsumeTimes: 3, NextOffset: 99, AttemptID: "attempt-1", PopTime: -1},
	} {
		got, err := DecodeRecord(r.Marshal())
		if err != nil || !reflect.DeepEqual(got, r) {
			t.Fatalf("DecodeRecord(Marshal(%+v)) = %+v, %v", r, got, err)
		}
	}
	good := (&Record{AttemptID: "a"}).Marshal()
	for _, bad := range [][]byte{nil, {1}, {2, 0}, {1, 4}, good[:len(good)-1], append(good, 0)} {
		if _, err := DecodeRecord(bad); !errors.Is(err, ErrBadRecord) {
			t.Errorf("DecodeRecord(%x) = %v, want ErrBadRecord", bad, err)
		}
	}
}

// FuzzDecodeRecord: DecodeRecord never panics; what it accepts encodes
// to bytes that decode to the same record.
func FuzzDecodeRecord(f *testing.F) {
	f.Add((&Record{PopTime: 5, AttemptID: "x", Orderly: true}).Marshal())
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		encode := func(r Record) []byte { return r.Marshal() }
		roundtrip.Check(t, b, DecodeRecord, encode, ErrBadRecord, func(a, b Record) bool { return reflect.DeepEqual(a, b) })
	})
}

// TestTableFollow: Follow gives the plain pops' records there now, and
// TakeAdded those put since, each once; FIFO records are not followed;
// counts follow puts and deletes.
func TestTableFollow(t *testing.T) {
	tb := NewTable()
	k := func(off int64) Key { return Key{Group: "g", Topic: "T", QueueID: 0, Offset: off} }
	tb.Put(k(1), Record{PopTime: 1})
	tb.Put(k(2), Record{PopTime: 1, Orderly: true})
	if got := tb.Follow(); len(got) != 1 || got[0].Offset != 1 {
		t.Fatalf("Follow gave %+v", got)
	}
	tb.Put(k(3), Record{PopTime: 2})
	tb.Put(k(1), Record{PopTime: 3})
	tb.Put(k(4), Record{PopTime: 2, Orderly: true})
	got := tb.TakeAdded(10)
	if len(got) != 2 || got[0].Offset != 3 || got[1].Offset != 1 || got[1].PopTime != 3 {
		t.Fatalf("TakeAdded gave %+v", got)
	}
	if again := tb.TakeAdded(10); len(again) != 0 {
		t.Fatalf("taken twice: %+v", again)
	}
	if tb.Count("g", "T") != 4 || tb.CountQueue(QueueOf(k(0))) != 4 || tb.Len() != 4 {
		t.Fatalf("counts %d %d %d", tb.Count("g", "T"), tb.CountQueue(QueueOf(k(0))), tb.Len())
	}
	tb.Delete(k(1))
	tb.Delete(k(1))
	if tb.Count("g", "T") != 3 {
		t.Fatalf("count after a delete %d", tb.Count("g", "T"))
	}
	tb.Unfollow()
	tb.Put(k(5), Record{PopTime: 9})
	if tb.Follow(); len(tb.TakeAdded(10)) != 0 {
		t.Fatal("added recorded while not followed")
	}
	if q := tb.Queue(QueueOf(k(0))); len(q) != 4 || q[0].Offset != 2 || q[3].Offset != 5 {
		t.Fatalf("queue %+v", q)
	}
}

// TestLockRecordsOrder: two callers locking the same keys in different
// orders never deadlock, and a queue's try-lock fails while it is held.
func TestLockRecordsOrder(t *testing.T) {
	tb := NewTable()
	a, b := Key{Group: "g", Topic: "T", Offset: 1}, Key{Group: "g", Topic: "T", Offset: 2}
	done := make(chan struct{})
	for _, keys := range [][]Key{{a, b}, {b, a, a}} {
		go func() {
			for range 1000 {
				tb.LockRecords(keys)()
			}
			done <- struct{}{}
		}()
	}
	<-done
	<-done
	unlock := tb.LockQueue(QueueOf(a))
	if _, ok := tb.TryLockQueue(QueueOf(a)); ok {
		t.Fatal("a held queue was locked again")
	}
	unlock()
	u, ok := tb.TryLockQueue(QueueOf(a))
	if !ok {
		t.Fatal("a free queue was not locked")
	}
	u()
	if n := tb.recordLocks.Len() + tb.queueLocks.Len(); n != 0 {
		t.Fatalf("%d locks kept", n)
	}
}
