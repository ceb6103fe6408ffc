package commitlog

import (
	"net/netip"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/runnelmq/runnel/message"
)

// writeLog stores records with the given store times, densely, and returns
// their offsets and the write position.
func writeLog(t *testing.T, times []int64) (*pebble.DB, []int64, int64) {
	t.Helper()
	db, err := pebble.Open("db", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var offs []int64
	phys := int64(100) // a log that does not start at 0, as after retention
	for i, ts := range times {
		body := make([]byte, i*3) // records of different sizes
		rec, err := message.AppendStoredMessage(nil, &message.MessageExt{
			Message: message.Message{Topic: "T", Body: body}, CommitLogOffset: phys, StoreTimestamp: ts,
			StoreHost: netip.MustParseAddrPort("[::1]:1"), // IPv6 moves nothing before storeTimestamp
			BornHost:  netip.MustParseAddrPort("[::1]:2"), // but this does
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Set(Key(phys), rec, pebble.NoSync); err != nil {
			t.Fatal(err)
		}
		offs = append(offs, phys)
		phys += int64(len(rec))
	}
	return db, offs, phys
}

func TestSearchTime(t *testing.T) {
	times := []int64{10, 10, 20, 30, 30, 30, 40, 50}
	db, offs, end := writeLog(t, times)
	cases := []struct {
		ts   int64
		want int64 // index into offs; len(offs) means end
	}{{0, 0}, {10, 0}, {11, 2}, {20, 2}, {25, 3}, {30, 3}, {31, 6}, {50, 7}, {51, 8}}
	for _, c := range cases {
		got, err := SearchTime(db, offs[0], end, c.ts)
		if err != nil {
			t.Fatal(err)
		}
		want := end
		if c.want < int64(len(offs)) {
			want = offs[c.want]
		}
		if got != want {
			t.Errorf("SearchTime(%d) = %d, want %d", c.ts, got, want)
		}
	}
	// Searching a sub-range never answers outside it.
	if got, _ := SearchTime(db, offs[0], offs[3], 100); got != offs[3] {
		t.Errorf("bounded search = %d, want %d", got, offs[3])
	}
}

func TestFirstLastSeek(t *testing.T) {
	db, offs, end := writeLog(t, []int64{1, 2, 3})
	first, ok, err := First(db)
	if err != nil || !ok || first.Phys != offs[0] || first.StoreTimestamp != 1 {
		t.Fatalf("First = %+v %v %v", first, ok, err)
	}
	last, ok, err := Last(db)
	if err != nil || !ok || last.Phys != offs[2] || last.Phys+last.Size != end || last.StoreTimestamp != 3 {
		t.Fatalf("Last = %+v %v %v", last, ok, err)
	}
	mid, ok, _ := SeekGE(db, offs[0]+1)
	if !ok || mid.Phys != offs[1] {
		t.Fatalf("SeekGE = %+v", mid)
	}
	if _, ok, _ := SeekGE(db, end); ok {
		t.Fatal("SeekGE past the end found a record")
	}
	if _, err := Read(db, offs[0]+1); err == nil {
		t.Fatal("Read inside a record succeeded")
	}
	if k, err := DecodeKey(Key(offs[1])); err != nil || k != offs[1] {
		t.Fatal(k, err)
	}
	if _, err := DecodeKey([]byte("Lshort")); err == nil {
		t.Fatal("bad key decoded")
	}
}
