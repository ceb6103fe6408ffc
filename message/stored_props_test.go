package message

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestStoredPropertiesAndLookup(t *testing.T) {
	m := &MessageExt{
		Message:   Message{Topic: "T", Properties: map[string]string{"a": "1", "TAGS": "x", "empty": ""}, Body: []byte("body")},
		StoreHost: netip.MustParseAddrPort("127.0.0.1:10911"),
		BornHost:  netip.MustParseAddrPort("[::1]:5000"),
	}
	m.SysFlag |= SysFlagBornHostV6
	rec, err := AppendStoredMessage(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	props, ok := StoredProperties(rec)
	if !ok {
		t.Fatal("no properties found")
	}
	want := UnmarshalProperties(string(props))
	if len(want) != 3 || want["a"] != "1" || want["TAGS"] != "x" {
		t.Fatalf("properties %q decode to %v", props, want)
	}
	for _, name := range []string{"a", "TAGS", "empty", "missing"} {
		v, ok := LookupProperty(props, name)
		w, wok := want[name]
		if v != w || ok != wok {
			t.Errorf("%s: got %q %v, want %q %v", name, v, ok, w, wok)
		}
	}
	for n := range len(rec) {
		if p, ok := StoredProperties(rec[:n]); ok && len(p) == len(props) {
			t.Fatalf("a record cut at %d still gave its properties", n)
		}
	}
	if _, ok := LookupProperty([]byte("a\x01b\x01c\x02\x01x\x02a"), "a"); ok {
		t.Fatal("malformed entries must be skipped as UnmarshalProperties skips them")
	}
}

// sameIndex fails t unless IndexStoredRecord reads b as DecodeStoredMessage
// does: the same refusal, or the same size and derived fields.
func sameIndex(t *testing.T, b []byte) {
	t.Helper()
	ix, n, err := IndexStoredRecord(b)
	m, mn, merr := DecodeStoredMessage(b, false)
	if (err == nil) != (merr == nil) {
		t.Fatalf("index: %v; decode: %v", err, merr)
	}
	if err != nil {
		if !errors.Is(err, ErrMalformedMessage) {
			t.Fatalf("index refused with %v, not ErrMalformedMessage", err)
		}
		return
	}
	if n != mn || string(ix.Topic) != m.Topic || ix.QueueID != m.QueueID || ix.QueueOffset != m.QueueOffset ||
		ix.StoreTimestamp != m.StoreTimestamp || string(ix.Tags) != m.Tags() ||
		!slices.Equal(strings.Fields(string(ix.Keys)), m.Keys()) || string(ix.UniqKey) != m.UniqKey() {
		t.Fatalf("index %d %+v, decoded %d %s/%d@%d tags %q keys %q uniq %q",
			n, ix, mn, m.Topic, m.QueueID, m.QueueOffset, m.Tags(), m.Keys(), m.UniqKey())
	}
}

// TestIndexStoredRecord: what a replica's apply reads of a record without
// decoding it is what decoding it gives, for well-formed and malformed
// property strings (repeated names, extra separators, empty values) and for
// every cut of a record.
func TestIndexStoredRecord(t *testing.T) {
	for _, props := range []string{
		"",
		"TAGS\x01a\x02KEYS\x01k1  k2 \x02UNIQ_KEY\x01U1",
		"TAGS\x01a\x02TAGS\x01b",                      // the last wins
		"TAGS\x01a\x02TAGS\x01b\x01c",                 // a malformed later entry is skipped
		"KEYS\x01\x02UNIQ_KEY\x01",                    // empty values
		"\x01x\x02TAGS\x02KEYS\x01a\x01b\x02\x02",     // nothing well formed but the empty-named entry
		"UNIQ_KEY\x01u\x02other\x01v\x02TAGS\x01\xff", // invalid UTF-8 tag
	} {
		m := sampleMessages(t)[0]
		m.Properties = UnmarshalProperties(props)
		rec, err := AppendStoredMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		// Put the raw string in the record itself, as a client may have sent it.
		if raw, ok := StoredProperties(rec); ok {
			rec = append(rec[:len(rec)-len(raw)-2:len(rec)-len(raw)-2], byte(len(props)>>8), byte(len(props)))
			rec = append(rec, props...)
			binary.BigEndian.PutUint32(rec, uint32(len(rec)))
		}
		if _, _, err := DecodeStoredMessage(rec, false); err != nil {
			t.Fatalf("properties %q: the record is refused: %v", props, err)
		}
		sameIndex(t, rec)
		for n := range len(rec) {
			sameIndex(t, rec[:n])
		}
	}
	for _, m := range sampleMessages(t) {
		rec, _ := AppendStoredMessage(nil, m)
		sameIndex(t, rec)
		if allocs := testing.AllocsPerRun(10, func() { _, _, _ = IndexStoredRecord(rec) }); allocs != 0 {
			t.Errorf("IndexStoredRecord allocates %.0f times a record, want none", allocs)
		}
	}
}

// FuzzIndexStoredRecord: any bytes are refused by both readers or read
// alike, and neither panics.
func FuzzIndexStoredRecord(f *testing.F) {
	for _, m := range sampleMessages(f) {
		b, _ := AppendStoredMessage(nil, m)
		f.Add(b)
	}
	f.Add([]byte{})
	f.Fuzz(sameIndex)
}
