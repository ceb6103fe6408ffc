package store

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestInProcessCrash crashes the store's filesystem instead of the process:
// a MemFS clone keeping every write that reached the filesystem is what a
// kill -9 leaves; a clone keeping only synced data is what an OS crash
// leaves. Many cycles run quickly and deterministically.
func TestInProcessCrash(t *testing.T) {
	for _, mode := range []FlushMode{AsyncFlush, SyncFlush} {
		for _, osCrash := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/osCrash=%v", mode, osCrash), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(mode), map[bool]uint64{false: 0, true: 1}[osCrash]))
				fs := vfs.NewCrashableMem()
				for cycle := 0; cycle < 10; cycle++ {
					opts := memOptions(nil, fakeclock.New(t0))
					opts.FS = fs
					opts.FlushMode = mode
					opts.MemTableSize = 1 << 20
					s, err := Open(opts)
					if err != nil {
						t.Fatalf("cycle %d open: %v", cycle, err)
					}
					var mu sync.Mutex
					var acked []ack
					var wg sync.WaitGroup
					stop := make(chan struct{})
					for w := 0; w < 3; w++ {
						wg.Add(1)
						go func(w int) {
							defer wg.Done()
							for i := 0; ; i++ {
								select {
								case <-stop:
									return
								default:
								}
								body := fmt.Sprintf("%d-%d-%d-%s", cycle, w, i, strings.Repeat("x", i%300))
								r, err := s.Put([]*protocol.MessageExt{msg("T", int32(w), body)})
								if err != nil {
									return // closed under us at the end of the cycle
								}
								mu.Lock()
								acked = append(acked, ack{int32(w), r[0].QueueOffset, r[0].CommitLogOffset, body})
								mu.Unlock()
							}
						}(w)
					}
					time.Sleep(time.Duration(1+rng.IntN(5)) * time.Millisecond)
					mu.Lock()
					mustSurvive := append([]ack(nil), acked...)
					mu.Unlock()
					if mode == AsyncFlush && osCrash {
						// Only what the background flusher synced survives an
						// OS crash: simulate one flusher tick, which covers
						// every ack taken before it (not those after).
						_ = s.Flush()
					}
					pct := 100
					if osCrash {
						pct = 0
					}
					crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rng})
					close(stop)
					wg.Wait()
					_ = s.Close()

					fs = crashed
					opts.FS = fs
					s, err = Open(opts)
					if err != nil {
						t.Fatalf("cycle %d reopen: %v", cycle, err)
					}
					if rep, err := s.Verify(); err != nil || rep.Orphans != 0 {
						t.Fatalf("cycle %d: %+v %v", cycle, rep, err)
					}
					for _, a := range mustSurvive {
						r, err := s.Get("T", a.queue, a.off, 1, 0, nil)
						if err != nil || r.Status != GetFound || bodies(t, r.Messages)[0] != a.body {
							t.Fatalf("cycle %d: acked %v/%d lost after crash (%d acked): %v %v", cycle, a.queue, a.off, len(mustSurvive), r.Status, err)
						}
					}
					_ = s.Close()
				}
			})
		}
	}
}
