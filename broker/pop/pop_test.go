package pop

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/goleak"
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
		h, err := ParseHandle(s)
		if err != nil {
			if !errors.Is(err, ErrBadHandle) {
				t.Fatalf("error not ErrBadHandle: %v", err)
			}
			return
		}
		again, err := ParseHandle(h.String())
		if err != nil || again != h {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, h, h.String(), again, err)
		}
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
		r, err := DecodeRecord(b)
		if err != nil {
			if !errors.Is(err, ErrBadRecord) {
				t.Fatalf("error not ErrBadRecord: %v", err)
			}
			return
		}
		again, err := DecodeRecord(r.Marshal())
		if err != nil || !reflect.DeepEqual(again, r) {
			t.Fatalf("%x -> %+v -> %+v, %v", b, r, again, err)
		}
	})
}
