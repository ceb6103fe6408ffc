package poison

import (
	"bytes"
	"testing"
)

func TestOverwriteInTestBinaries(t *testing.T) {
	b := []byte("kept by mistake")
	Overwrite(b[:4])
	if !bytes.Equal(b[:4], bytes.Repeat([]byte{Byte}, 4)) || string(b[4:]) != " by mistake" {
		t.Fatalf("Overwrite(b[:4]) left %q", b)
	}
}
