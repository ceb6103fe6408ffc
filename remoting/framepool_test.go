package remoting

import "testing"

// TestFrameClasses: a frame of a pooled size comes in the smallest class
// that holds it, from 1 KiB up to a batch of 32 1 KiB messages (about 37
// KiB, in 64 KiB), and is taken back; a smaller or larger one is the
// collector's, with exactly its own size.
func TestFrameClasses(t *testing.T) {
	for _, c := range []struct{ n, capacity int }{
		{1023, 1023}, {1024, 2 << 10}, {1200, 2 << 10}, {2 << 10, 2 << 10}, {2<<10 + 1, 4 << 10},
		{16 << 10, 16 << 10}, {16<<10 + 1, 32 << 10}, {37 << 10, 64 << 10}, {64 << 10, 64 << 10},
		{64<<10 + 1, 64<<10 + 1},
	} {
		for range 2 { // a new buffer, then (perhaps) the one put back
			f := getFrame(c.n)
			if len(f) != 0 || cap(f) != c.capacity {
				t.Fatalf("getFrame(%d): len %d cap %d, want 0 and %d", c.n, len(f), cap(f), c.capacity)
			}
			pooled := c.capacity != c.n || c.n == 2<<10 || c.n == 16<<10 || c.n == 64<<10
			if pooledFrame(f) != pooled {
				t.Fatalf("getFrame(%d): pooledFrame %v, want %v", c.n, !pooled, pooled)
			}
			putFrame(f[:c.n])
		}
	}
	// A buffer of a class's size that the pools did not make is taken too;
	// one of any other capacity is not.
	if !pooledFrame(make([]byte, 0, 32<<10)) || pooledFrame(make([]byte, 0, 40<<10)) {
		t.Fatal("pooledFrame goes by capacity")
	}
}
