package store

import (
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/runnelmq/runnel/message"
)

// The log's tables are written in blocks of logBlockSize, so a pull of 32
// 1 KiB messages reads a block or two, not eleven (see logBlockSize); the
// database beside it keeps Pebble's 4 KiB.
func TestLogTablesHaveLargeBlocks(t *testing.T) {
	s, _, _ := openMem(t)
	batch := make([]*message.MessageExt, 64)
	for i := range batch {
		batch[i] = benchMsg(0)
	}
	for range 32 { // 2 MiB of 1 KiB bodies
		mustPut(t, s, batch...)
	}
	if err := s.log.Flush(); err != nil {
		t.Fatal(err)
	}
	levels, err := s.log.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	var blocks, raw uint64
	for _, level := range levels {
		for _, tbl := range level {
			blocks += tbl.Properties.NumDataBlocks
			raw += tbl.Properties.RawKeySize + tbl.Properties.RawValueSize
		}
	}
	if blocks == 0 {
		t.Fatal("no table written")
	}
	if per := raw / blocks; per < logBlockSize*3/4 {
		t.Errorf("%d bytes of records per data block (%d blocks), want about %d", per, blocks, logBlockSize)
	}
}
