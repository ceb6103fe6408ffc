package remoting

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/runnelmq/runnel/internal/poison"
)

// TestFrameClasses: a frame of a pooled size comes in the smallest class
// that holds it, from 1 KiB up to a batch of 32 1 KiB messages (about 37
// KiB, in 64 KiB); a smaller or larger one is the collector's, with
// exactly its own size.
func TestFrameClasses(t *testing.T) {
	for _, c := range []struct{ n, capacity int }{
		{1023, 1023}, {1024, 2 << 10}, {1200, 2 << 10}, {2 << 10, 2 << 10}, {2<<10 + 1, 4 << 10},
		{16 << 10, 16 << 10}, {16<<10 + 1, 32 << 10}, {37 << 10, 64 << 10}, {64 << 10, 64 << 10},
		{64<<10 + 1, 64<<10 + 1},
	} {
		f := getFrame(c.n)
		if len(f) != 0 || cap(f) != c.capacity {
			t.Fatalf("getFrame(%d): len %d cap %d, want 0 and %d", c.n, len(f), cap(f), c.capacity)
		}
		if pooled := c.n >= minPooledFrame && c.n <= maxPooledFrame; pooledFrame(f) != pooled {
			t.Fatalf("getFrame(%d): pooledFrame %v, want %v", c.n, !pooled, pooled)
		}
	}
	// A buffer of a class's size that the pools did not make is taken too;
	// one of any other capacity is not.
	if !pooledFrame(make([]byte, 0, 32<<10)) || pooledFrame(make([]byte, 0, 40<<10)) {
		t.Fatal("pooledFrame goes by capacity")
	}
}

// TestFrameReused: a frame put back is handed out again whole (its
// class's capacity, overwritten in a test binary), in every class. The
// pool may drop a buffer (always may under the race detector), so each
// class gets a few tries.
func TestFrameReused(t *testing.T) {
	for k := range framePools {
		size := 1 << (k + minFrameShift)
		reused := false
		for try := 0; try < 100 && !reused; try++ {
			f := getFrame(size)
			f = append(f, bytes.Repeat([]byte{'x'}, size)...)
			putFrame(f[:size/2])
			g := getFrame(size)
			if unsafe.SliceData(g) != unsafe.SliceData(f) {
				continue
			}
			reused = true
			if cap(g) != size || len(g) != 0 {
				t.Fatalf("class %d: reused frame len %d cap %d, want 0 and %d", k, len(g), cap(g), size)
			}
			if g = g[:size]; !bytes.Equal(g, bytes.Repeat([]byte{poison.Byte}, size)) {
				t.Fatalf("class %d: a frame came back without being overwritten", k)
			}
		}
		if !reused {
			t.Fatalf("class %d (%d bytes): a frame put back never came back in 100 tries", k, size)
		}
	}
}
