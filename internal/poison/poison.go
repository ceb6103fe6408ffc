// Package poison overwrites buffers given back for reuse, in test binaries
// only.
//
// A recycled buffer (a request frame, a batch body) may be reused as soon
// as it is given back. Code that kept a piece of it would read another
// request's bytes, and would often pass its tests by luck: the next user
// may not have written there yet. In a test binary every buffer given back
// is overwritten at once, so such code reads garbage and fails. Elsewhere
// Overwrite does nothing.
package poison

import "testing"

// enabled is whether Overwrite writes: in test binaries.
var enabled = testing.Testing()

// Byte is what Overwrite fills a buffer with.
const Byte = 0xA5

// Overwrite fills b with Byte in a test binary.
func Overwrite(b []byte) {
	if !enabled {
		return
	}
	for i := range b {
		b[i] = Byte
	}
}
