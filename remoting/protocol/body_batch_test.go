package protocol

import (
	"bytes"
	"errors"
	"testing"
)

func TestBatchRoundTripAndTruncation(t *testing.T) {
	in := []*Message{
		{Flag: 1, Body: []byte("first"), Properties: map[string]string{"TAGS": "A", "KEYS": "k1"}},
		{Body: []byte(""), Properties: map[string]string{}},
		{Flag: 7, Body: bytes.Repeat([]byte("x"), 300)},
	}
	enc, err := AppendBatch(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeBatch(enc)
	if err != nil || len(out) != len(in) {
		t.Fatalf("decode: %d messages, %v", len(out), err)
	}
	for i := range in {
		if out[i].Flag != in[i].Flag || !bytes.Equal(out[i].Body, in[i].Body) || len(out[i].Properties) != len(in[i].Properties) {
			t.Fatalf("message %d: %+v, want %+v", i, out[i], in[i])
		}
	}
	first, _ := AppendBatch(nil, in[:1])
	for n := 1; n < len(enc); n++ {
		if _, err := DecodeBatch(enc[:n]); err == nil && n != len(first) && n != len(first)+22 {
			t.Fatalf("a body cut at %d decoded", n)
		} else if err != nil && !errors.Is(err, ErrBadBatch) {
			t.Fatalf("cut at %d: %v is not ErrBadBatch", n, err)
		}
	}
	if _, err := DecodeBatch(nil); !errors.Is(err, ErrBadBatch) {
		t.Fatalf("empty body: %v", err)
	}
	big := map[string]string{"k": string(bytes.Repeat([]byte("v"), maxBatchPropertiesLen))}
	if _, err := AppendBatch(nil, []*Message{{Properties: big}}); !errors.Is(err, ErrBadBatch) {
		t.Fatalf("oversized properties: %v", err)
	}
}

func FuzzDecodeBatch(f *testing.F) {
	enc, _ := AppendBatch(nil, []*Message{{Flag: 1, Body: []byte("b"), Properties: map[string]string{"a": "1"}}, {Body: []byte("c")}})
	f.Add(enc)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		msgs, err := DecodeBatch(b)
		if err != nil {
			return
		}
		again, err := AppendBatch(nil, msgs)
		if err != nil {
			t.Fatalf("a decoded batch does not encode: %v", err)
		}
		back, err := DecodeBatch(again)
		if err != nil || len(back) != len(msgs) {
			t.Fatalf("re-encoded batch: %d messages, %v", len(back), err)
		}
	})
}

// A batch body is allocated once, at its exact size: a batch of 32 1 KiB
// messages grown by appends was copied seven times over.
func TestAppendBatchAllocatesOnce(t *testing.T) {
	msgs := make([]*Message, 32)
	for i := range msgs {
		msgs[i] = &Message{Body: make([]byte, 1024), Properties: map[string]string{"UNIQ_KEY": "0A0000017B0C18B4AAC2", "TAGS": "t", "WAIT": "true"}}
	}
	var enc []byte
	// One; two under the race detector, where the properties' sorting
	// scratch escapes. Grown by appends it was 78.
	if allocs := testing.AllocsPerRun(20, func() { enc, _ = AppendBatch(nil, msgs) }); allocs > 2 {
		t.Fatalf("%v allocations per batch, want 1", allocs)
	}
	back, err := DecodeBatch(enc)
	if err != nil || len(back) != 32 || back[31].Properties["TAGS"] != "t" {
		t.Fatalf("%v, %d messages", err, len(back))
	}
}
