package index

import (
	"bytes"
	"hash/fnv"
	"slices"
	"testing"
)

func TestHashAndKeys(t *testing.T) {
	hs := []uint32{Hash(KindKey, "T", "k"), Hash(KindUniq, "T", "k"), Hash(KindKey, "TT", "k"), Hash(KindKey, "T", "kk"), Hash(KindKey, "Tk", "")}
	for i := range hs {
		for j := i + 1; j < len(hs); j++ {
			if hs[i] == hs[j] {
				t.Errorf("hash %d equals hash %d", i, j)
			}
		}
	}
	f := fnv.New32a()
	_, _ = f.Write([]byte("K\x01Tk"))
	if Hash(KindKey, "T", "k") != f.Sum32() {
		t.Fatal("Hash is not FNV-1a of kind, len(topic), topic, key")
	}
	// Segments sort by start, buckets stay inside their segment.
	if bytes.Compare(DirKey(5), DirKey(1<<40)) >= 0 || bytes.Compare(BucketKey(5, Buckets-1), BucketKey(6, 0)) >= 0 {
		t.Fatal("keys out of order")
	}
	if s, err := ParseDirKey(DirKey(77)); err != nil || s != 77 {
		t.Fatal(s, err)
	}
	if _, err := ParseDirKey(BucketKey(77, 1)); err == nil {
		t.Fatal("bucket key parsed as a segment key")
	}
	d := Dir{End: 9, MinStoreTime: -1, MaxStoreTime: 1 << 50, Entries: 3}
	if got, err := DecodeDir(d.Encode()); err != nil || got != d {
		t.Fatal(got, err)
	}
	if _, err := DecodeDir(make([]byte, 27)); err == nil {
		t.Fatal("short segment value decoded")
	}
	if _, err := AppendMatches(nil, make([]byte, 13), 1); err == nil {
		t.Fatal("ragged bucket accepted")
	}
}

func TestSegment(t *testing.T) {
	g := NewSegment(100)
	hk, hu, other := Hash(KindKey, "T", "k"), Hash(KindUniq, "T", "u"), Hash(KindKey, "T", "x")
	g.Add(hk, 100, 7)
	g.Add(hu, 100, 7)
	g.Add(hk, 250, 5)
	if m := g.AppendMatches(nil, hk); !slices.Equal(m, []int64{100, 250}) {
		t.Fatal(m)
	}
	if m := g.AppendMatches(nil, other); len(m) != 0 {
		t.Fatal(m)
	}
	kv := map[string][]byte{}
	g.Seal(300, func(k, v []byte) { kv[string(k)] = v })
	d, err := DecodeDir(kv[string(DirKey(100))])
	if err != nil || d != (Dir{End: 300, MinStoreTime: 5, MaxStoreTime: 7, Entries: 3}) {
		t.Fatal(d, err)
	}
	m, err := AppendMatches(nil, kv[string(BucketKey(100, int(hk%Buckets)))], hk)
	if err != nil || !slices.Equal(m, []int64{100, 250}) {
		t.Fatal(m, err)
	}
	want := 3 // the segment and two buckets
	if hk%Buckets == hu%Buckets {
		want = 2
	}
	if len(kv) != want {
		t.Fatalf("%d keys written, want %d: empty buckets are not written", len(kv), want)
	}
	if es := g.Entries(nil); len(es) != 3 {
		t.Fatal(es)
	}
}
