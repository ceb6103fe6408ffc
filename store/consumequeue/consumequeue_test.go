package consumequeue

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestKeysOrderAndParse(t *testing.T) {
	// Entries of one queue sort by offset and never interleave with another
	// queue or topic, including topics that are prefixes of each other.
	keys := [][]byte{
		Key("A", 0, 0), Key("A", 0, 1), Key("A", 0, 256), Key("A", 1, 0),
		Key("AB", 0, 0), Key("B", -1, 5),
	}
	for i := 1; i < len(keys); i++ {
		if i < 4 && bytes.Compare(keys[i-1], keys[i]) >= 0 {
			t.Errorf("key %d not after key %d", i, i-1)
		}
	}
	lo, hi := QueueBounds("A", 0)
	for i, k := range keys {
		in := bytes.Compare(k, lo) >= 0 && bytes.Compare(k, hi) < 0
		if in != (i < 3) {
			t.Errorf("key %d in A/0 bounds: %v", i, in)
		}
	}
	lo, hi = QueueBounds("B", -1)
	if k := Key("B", -1, 5); bytes.Compare(k, lo) < 0 || bytes.Compare(k, hi) >= 0 {
		t.Error("queue id -1 outside its own bounds")
	}
	p, topic, q, off, err := ParseKey(Key("top", 7, 99))
	if err != nil || p != EntryPrefix || topic != "top" || q != 7 || off != 99 {
		t.Fatal(p, topic, q, off, err)
	}
	if _, topic, q, _, err := ParseKey(FloorKey("x", 3)); err != nil || topic != "x" || q != 3 {
		t.Fatal(topic, q, err)
	}
	for _, bad := range [][]byte{nil, {'Q'}, {'Q', 5, 'a'}, append(Key("a", 1, 2), 0)} {
		if _, _, _, _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%x) accepted", bad)
		}
	}
	e := Entry{PhysOffset: 1 << 40, Size: 1234, TagsCode: -5, StoreTimestamp: 99}
	got, err := DecodeEntry(e.AppendEncode(nil))
	if err != nil || got != e {
		t.Fatal(got, err)
	}
	if _, err := DecodeEntry(make([]byte, 5)); err == nil {
		t.Fatal("short entry decoded")
	}
}

func TestScanAndSearch(t *testing.T) {
	db, err := pebble.Open("db", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	put := func(topic string, q int32, off, phys, ts int64) {
		_ = db.Set(Key(topic, q, off), Entry{PhysOffset: phys, Size: 10, StoreTimestamp: ts}.AppendEncode(nil), pebble.NoSync)
	}
	for off := int64(3); off < 10; off++ {
		put("A", 0, off, off*100, off*10)
	}
	put("A", 2, 0, 5, 1)
	put("AB", 0, 0, 7, 1)
	// A queue emptied by retention only has its floor.
	_ = db.Set(FloorKey("E", 1), binary.BigEndian.AppendUint64(nil, 42), pebble.NoSync)
	got, err := Scan(db)
	if err != nil {
		t.Fatal(err)
	}
	want := map[QueueID]Range{
		{"A", 0}: {3, 10}, {"A", 2}: {0, 1}, {"AB", 0}: {0, 1}, {"E", 1}: {42, 42},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Scan = %v, want %v", got, want)
	}
	for _, c := range []struct{ ts, want int64 }{{0, 3}, {30, 3}, {31, 4}, {90, 9}, {91, 10}} {
		if off, _ := SearchTime(db, "A", 0, 3, 10, c.ts); off != c.want {
			t.Errorf("SearchTime(%d) = %d, want %d", c.ts, off, c.want)
		}
	}
	for _, c := range []struct{ phys, want int64 }{{0, 3}, {300, 3}, {301, 4}, {900, 9}, {901, 10}} {
		if off, _ := SearchPhys(db, "A", 0, 3, 10, c.phys); off != c.want {
			t.Errorf("SearchPhys(%d) = %d, want %d", c.phys, off, c.want)
		}
	}
}
