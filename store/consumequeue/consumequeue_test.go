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
	// Chunks of one queue sort by offset and never interleave with another
	// queue or topic, including topics that are prefixes of each other.
	keys := [][]byte{
		Key("A", 0, 0), Key("A", 0, ChunkLen), Key("A", 0, 4*ChunkLen), Key("A", 1, 0),
		Key("AB", 0, 0), Key("B", -1, 5),
	}
	for i := 1; i < len(keys); i++ {
		if i < 4 && bytes.Compare(keys[i-1], keys[i]) >= 0 {
			t.Errorf("key %d not after key %d", i, i-1)
		}
	}
	if !bytes.Equal(Key("A", 0, 1), Key("A", 0, ChunkLen-1)) || bytes.Equal(Key("A", 0, ChunkLen-1), Key("A", 0, ChunkLen)) {
		t.Error("offsets of one chunk must share its key, and only they")
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
	if err != nil || p != EntryPrefix || topic != "top" || q != 7 || off != ChunkStart(99) {
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

func TestChunkEncoding(t *testing.T) {
	es := []Entry{{PhysOffset: 10, Size: 1}, {PhysOffset: 20, Size: 2}, {PhysOffset: 30, Size: 3}}
	// A chunk whose first live offset is not its start (after retention).
	v := AppendChunk(nil, 2*ChunkLen+5, es)
	first, got, err := DecodeChunk(nil, 2*ChunkLen, v)
	if err != nil || first != 2*ChunkLen+5 || !reflect.DeepEqual(got, es) {
		t.Fatal(first, got, err)
	}
	for off, want := range map[int64]int{2*ChunkLen + 4: -1, 2*ChunkLen + 5: 0, 2*ChunkLen + 7: 2, 2*ChunkLen + 8: -1} {
		e, ok, err := chunkEntry(v, 2*ChunkLen, off)
		if err != nil || ok != (want >= 0) || ok && e != es[want] {
			t.Errorf("entry %d: %+v %v %v, want index %d", off, e, ok, err, want)
		}
	}
	for _, bad := range [][]byte{nil, v[:len(v)-1], append([]byte{ChunkLen - 1}, v[1:]...)} {
		if _, _, err := DecodeChunk(nil, 0, bad); err == nil {
			t.Errorf("DecodeChunk(%x) accepted", bad)
		}
	}
}

func TestScanSearchAndLastChunk(t *testing.T) {
	db, err := pebble.Open("db", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// put writes entries [first, first+n) of a queue, chunk by chunk.
	put := func(topic string, q int32, first, n int64) {
		for off := first; off < first+n; {
			end := min(ChunkStart(off)+ChunkLen, first+n)
			var es []Entry
			for o := off; o < end; o++ {
				es = append(es, Entry{PhysOffset: o * 100, Size: 10, StoreTimestamp: o * 10})
			}
			_ = db.Set(Key(topic, q, off), AppendChunk(nil, off, es), pebble.NoSync)
			off = end
		}
	}
	floor := func(topic string, q int32, min int64) {
		_ = db.Set(FloorKey(topic, q), binary.BigEndian.AppendUint64(nil, uint64(min)), pebble.NoSync)
	}
	put("A", 0, 3, 7)
	put("A", 2, 0, 1)
	put("AB", 0, 0, 1)
	put("F", 0, 0, ChunkLen+10)
	floor("F", 0, 70) // retention kept the chunk holding 70
	floor("E", 1, 42) // a queue emptied by retention only has its floor
	got, err := Scan(db)
	if err != nil {
		t.Fatal(err)
	}
	want := map[QueueID]Range{
		{"A", 0}: {3, 10}, {"A", 2}: {0, 1}, {"AB", 0}: {0, 1}, {"E", 1}: {42, 42}, {"F", 0}: {70, ChunkLen + 10},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Scan = %v, want %v", got, want)
	}
	get := func(off int64) (Entry, bool, error) { return Get(db, "A", 0, off) }
	for _, c := range []struct{ ts, want int64 }{{0, 3}, {30, 3}, {31, 4}, {90, 9}, {91, 10}} {
		if off, _ := Search(3, 10, get, func(e Entry) bool { return e.StoreTimestamp >= c.ts }); off != c.want {
			t.Errorf("search time %d = %d, want %d", c.ts, off, c.want)
		}
	}
	getF := func(off int64) (Entry, bool, error) { return Get(db, "F", 0, off) }
	for _, c := range []struct{ phys, want int64 }{{0, 70}, {7000, 70}, {7001, 71}, {7300, 73}, {7301, 74}} {
		if off, _ := SearchPhys(70, ChunkLen+10, getF, c.phys); off != c.want {
			t.Errorf("search phys %d = %d, want %d", c.phys, off, c.want)
		}
	}
	first, tail, err := LastChunk(db, "F", 0, ChunkLen+10)
	if err != nil || first != ChunkLen || len(tail) != 10 || tail[9].PhysOffset != (ChunkLen+9)*100 {
		t.Fatal(first, tail, err)
	}
	if first, tail, err := LastChunk(db, "A", 0, 10); err != nil || first != 3 || len(tail) != 7 {
		t.Fatal(first, tail, err)
	}
	if _, _, err := LastChunk(db, "A", 0, 12); err == nil {
		t.Fatal("a last chunk ending below the queue's end was accepted")
	}
	if first, tail, err := LastChunk(db, "G", 0, 2*ChunkLen); err != nil || first != 2*ChunkLen || tail != nil {
		t.Fatal("a filled last chunk is not a tail:", first, tail, err)
	}
}
