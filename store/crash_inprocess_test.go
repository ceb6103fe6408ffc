package store

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/message"
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
					// Crash once the writers have had a random number of
					// acks, so every cycle has acknowledged writes to lose.
					target := 1 + rng.IntN(200)
					var mu sync.Mutex
					var acked []ack
					var putErr error
					reached := make(chan struct{})
					var once sync.Once
					signal := func() { once.Do(func() { close(reached) }) }
					stop := runWriters(3, func(w, i int) bool {
						body := fmt.Sprintf("%d-%d-%d-%s", cycle, w, i, strings.Repeat("x", i%300))
						r, err := s.Put([]*message.MessageExt{msg("T", int32(w), body)})
						mu.Lock()
						defer mu.Unlock()
						if err != nil {
							// Closed under us at the end of the cycle, or a
							// real failure before the target (checked below).
							if putErr == nil {
								putErr = err
							}
							signal()
							return false
						}
						acked = append(acked, ack{int32(w), r[0].QueueOffset, r[0].CommitLogOffset, body})
						if len(acked) >= target {
							signal()
						}
						return true
					})
					<-reached
					mu.Lock()
					mustSurvive := append([]ack(nil), acked...)
					err = putErr
					mu.Unlock()
					if err != nil {
						stop()
						_ = s.Close()
						t.Fatalf("cycle %d: put failed after %d acks: %v", cycle, len(mustSurvive), err)
					}
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
					stop()
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
