package sql92

import (
	"strconv"
	"testing"
)

// The per-message cost of an SQL92 filter against a TAG filter's hash-set
// lookup (broker/pull.go's tagFilter). Run side by side:
//
//	go test -run XXX -bench 'Filter' ./broker/filter/sql92/
//
// Both walk the same 64 messages, half of which pass.

const benchMsgs = 64

func benchProps() []map[string]string {
	ps := make([]map[string]string, benchMsgs)
	for i := range ps {
		b := "x"
		if i%4 >= 2 {
			b = "z"
		}
		ps[i] = map[string]string{"a": strconv.Itoa(i%8 + 2), "b": b, "TAGS": "T" + strconv.Itoa(i%4),
			"KEYS": "k" + strconv.Itoa(i), "UNIQ_KEY": "7F0000011B5418B4AAC2" + strconv.Itoa(i)}
	}
	return ps
}

func BenchmarkFilterSQL92(b *testing.B) {
	e := mustCompile(b, "a > 5 AND b IN ('x','y')")
	ps := benchProps()
	b.ReportAllocs()
	n := 0
	for i := 0; b.Loop(); i++ {
		if e.MatchMap(ps[i%benchMsgs]) {
			n++
		}
	}
	if n == 0 {
		b.Fatal("nothing matched")
	}
}

// BenchmarkFilterSQL92Getter is Match with a getter the caller keeps,
// which saves MatchMap's closure.
func BenchmarkFilterSQL92Getter(b *testing.B) {
	e := mustCompile(b, "a > 5 AND b IN ('x','y')")
	ps := benchProps()
	var cur map[string]string
	get := func(name string) (string, bool) { v, ok := cur[name]; return v, ok }
	b.ReportAllocs()
	n := 0
	for i := 0; b.Loop(); i++ {
		cur = ps[i%benchMsgs]
		if e.Match(get) {
			n++
		}
	}
	if n == 0 {
		b.Fatal("nothing matched")
	}
}

func BenchmarkFilterTagSet(b *testing.B) {
	set := map[int64]struct{}{javaHash("T0"): {}, javaHash("T1"): {}}
	codes := make([]int64, benchMsgs)
	for i := range codes {
		codes[i] = javaHash("T" + strconv.Itoa(i%4))
	}
	b.ReportAllocs()
	n := 0
	for i := 0; b.Loop(); i++ {
		if _, ok := set[codes[i%benchMsgs]]; ok {
			n++
		}
	}
	if n == 0 {
		b.Fatal("nothing matched")
	}
}

// javaHash is String.hashCode for ASCII, as tag codes are.
func javaHash(s string) int64 {
	var h int32
	for i := range len(s) {
		h = 31*h + int32(s[i])
	}
	return int64(h)
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile("a > 5 AND b IN ('x','y') OR TAGS STARTSWITH 'T' AND c BETWEEN 1.5 AND 10"); err != nil {
			b.Fatal(err)
		}
	}
}
