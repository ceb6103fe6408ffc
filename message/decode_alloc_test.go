package message

import (
	"bytes"
	"net/netip"
	"testing"
	"unsafe"
)

// pullBody is a PULL body of n 1 KiB messages of one topic, with the
// properties a producer sets (tags, keys, unique id, and two of its own).
func pullBody(tb testing.TB, n int) []byte {
	tb.Helper()
	var body []byte
	for i := range n {
		m := &MessageExt{
			Message: Message{Topic: "BenchTopic", Body: bytes.Repeat([]byte("b"), 1024), Properties: map[string]string{
				PropertyTags: "TagA", PropertyKeys: "order-1", PropertyUniqClientMessageIDKey: "C0A80001000100000000000000000001",
				"a": "1", "region": "eu"}},
			QueueID: 1, QueueOffset: int64(i), CommitLogOffset: int64(i) * 1200, BornTimestamp: 1700000000123,
			BornHost: netip.MustParseAddrPort("10.1.2.3:54321"), StoreHost: netip.MustParseAddrPort("127.0.0.1:10911"),
		}
		var err error
		if body, err = AppendStoredMessage(body, m); err != nil {
			tb.Fatal(err)
		}
	}
	return body
}

// Decoding a pull's messages costs about three allocations each (the
// strings of a record in one, its properties map's header and entries; six
// before) and a few per pull: the
// MessageExt values come in one array, the topic's string is shared by
// the records that repeat it, bodies alias the pull body.
func TestDecodeMessagesAllocations(t *testing.T) {
	const n = 32
	b := pullBody(t, n)
	allocs := testing.AllocsPerRun(20, func() {
		msgs, err := DecodeMessages(b)
		if err != nil || len(msgs) != n {
			t.Fatal(err, len(msgs))
		}
	})
	if per := allocs / n; per > 3.5 {
		t.Errorf("%.1f allocations per decoded message (%.0f for %d), want at most 3.5", per, allocs, n)
	}
	msgs, _ := DecodeMessages(b)
	for _, m := range msgs {
		at := uintptr(unsafe.Pointer(unsafe.SliceData(m.Body)))
		if lo := uintptr(unsafe.Pointer(unsafe.SliceData(b))); at < lo || at >= lo+uintptr(len(b)) {
			t.Fatal("a body was copied out of the pull body")
		}
	}
}

func BenchmarkDecodeMessages(b *testing.B) {
	body := pullBody(b, 32)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for range b.N {
		if _, err := DecodeMessages(body); err != nil {
			b.Fatal(err)
		}
	}
}
