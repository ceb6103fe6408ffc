package store

import (
	"bufio"
	"fmt"
	randv1 "math/rand"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/fakeclock"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// The crash test re-executes the test binary as a writer child (crashChild),
// kills it with SIGKILL at a random moment, reopens the store and checks it
// against every append the child reported as acknowledged.
const (
	crashChildEnv = "RUNNEL_STORE_CRASH_CHILD" // the store directory
	crashModeEnv  = "RUNNEL_STORE_CRASH_MODE"
	crashTagEnv   = "RUNNEL_STORE_CRASH_TAG"
	crashTopic    = "Crash"
	crashQueues   = 3
)

// crashChild writes batches from several goroutines and prints one line per
// acknowledged message: "A queue offset phys body".
func crashChild() {
	mode, _ := strconv.Atoi(os.Getenv(crashModeEnv))
	opts := DefaultOptions(os.Getenv(crashChildEnv))
	opts.FlushMode = FlushMode(mode)
	opts.MemTableSize = 1 << 20 // rotate WALs and flush often, to crash in those paths too
	opts.RetentionInterval = -1
	s, err := Open(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	tag := os.Getenv(crashTagEnv)
	var mu sync.Mutex
	out := os.Stdout
	fmt.Fprintln(out, "ready")
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			body := make([]byte, 0, 600)
			for i := 0; ; i++ {
				n := 1 + (i % 5)
				ms := make([]*protocol.MessageExt, n)
				for j := range ms {
					id := fmt.Sprintf("%s-%d-%d-%d", tag, w, i, j)
					body = append(body[:0], id...)
					body = append(body, strings.Repeat("p", (i*7+j)%500)...)
					ms[j] = msg(crashTopic, int32((w+j)%crashQueues), string(body),
						protocol.PropertyKeys, id, protocol.PropertyUniqClientMessageIDKey, id)
				}
				rs, err := s.Put(ms)
				if err != nil {
					fmt.Fprintln(os.Stderr, "put:", err)
					os.Exit(3)
				}
				var sb strings.Builder
				for j, r := range rs {
					fmt.Fprintf(&sb, "A %d %d %d %s\n", ms[j].QueueID, r.QueueOffset, r.CommitLogOffset, ms[j].Body)
				}
				mu.Lock()
				_, _ = out.WriteString(sb.String())
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
}

type ack struct {
	queue     int32
	off, phys int64
	body      string
}

func TestCrashRecovery(t *testing.T) {
	cycles := 50
	if v, err := strconv.Atoi(os.Getenv("RUNNEL_CRASH_CYCLES")); err == nil && v > 0 {
		cycles = v
	}
	if testing.Short() {
		cycles = 5
	}
	root := t.TempDir()
	var dir string
	rng := randv1.New(randv1.NewSource(time.Now().UnixNano()))
	var all []ack
	for c := 0; c < cycles; c++ {
		mode := FlushMode(c % 2)
		if c%10 == 0 {
			// A fresh store every 10 cycles keeps Verify's full pass cheap;
			// within a group each reopen recovers a store that was itself
			// recovered.
			dir = fmt.Sprintf("%s/%d", root, c)
			all = nil
		}
		tc0 := time.Now()
		acks := runCrashChild(t, dir, mode, fmt.Sprint("c", c), time.Duration(5+rng.Intn(60))*time.Millisecond)
		all = append(all, acks...)
		opts := DefaultOptions(dir)
		opts.RetentionInterval = -1
		tcOpen := time.Now()
		s, err := Open(opts)
		if err != nil {
			t.Fatalf("cycle %d (%v): reopen: %v", c, mode, err)
		}
		tc1 := time.Now()
		rep, err := s.Verify()
		tc2 := time.Now()
		if err != nil || rep.Orphans != 0 {
			_ = s.Close()
			t.Fatalf("cycle %d (%v): %+v %v", c, mode, rep, err)
		}
		// Every message ever acknowledged is where it was acknowledged,
		// with its body (checked for this cycle's and a sample of older ones).
		check := acks
		if len(all) > len(acks) {
			for i := 0; i < 50; i++ {
				check = append(check, all[rng.Intn(len(all))])
			}
		}
		for _, a := range check {
			r, err := s.Get(crashTopic, a.queue, a.off, 1, 0, nil)
			if err != nil || r.Status != GetFound {
				_ = s.Close()
				t.Fatalf("cycle %d (%v): acked %+v missing: %v %v", c, mode, a, r.Status, err)
			}
			m, _ := protocol.DecodeMessagesRaw(r.Messages)
			if m[0].CommitLogOffset != a.phys || string(m[0].Body) != a.body {
				_ = s.Close()
				t.Fatalf("cycle %d: acked %+v reads back as phys %d body %.20q", c, a, m[0].CommitLogOffset, m[0].Body)
			}
		}
		if len(acks) > 0 {
			a := acks[len(acks)-1]
			id := strings.SplitN(a.body, "p", 2)[0]
			if recs, err := s.QueryByUniqKey(crashTopic, id, 4); err != nil || len(recs) != 1 {
				t.Fatalf("cycle %d: uniq-key lookup of %s: %d %v", c, id, len(recs), err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("cycle %d %v: %d acks, %d records in store; child %v, reopen %v, verify %v, checks %v",
			c, mode, len(acks), rep.Records, tcOpen.Sub(tc0), tc1.Sub(tcOpen), tc2.Sub(tc1), time.Since(tc2))
	}
	if len(all) == 0 {
		t.Fatal("no child ever acknowledged a write")
	}
}

func runCrashChild(t *testing.T, dir string, mode FlushMode, tag string, after time.Duration) []ack {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, crashModeEnv+"="+strconv.Itoa(int(mode)), crashTagEnv+"="+tag)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() || sc.Text() != "ready" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child did not start: %q %s", sc.Text(), stderr.String())
	}
	killed := make(chan struct{})
	timer := time.AfterFunc(after, func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		close(killed)
	})
	var acks []ack
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 5)
		if len(f) != 5 || f[0] != "A" {
			continue // a line torn by the kill
		}
		q, _ := strconv.Atoi(f[1])
		off, _ := strconv.ParseInt(f[2], 10, 64)
		phys, _ := strconv.ParseInt(f[3], 10, 64)
		acks = append(acks, ack{int32(q), off, phys, f[4]})
	}
	<-killed
	timer.Stop()
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("child exited on its own: %v %s", err, stderr.String())
	}
	// The last line may have been cut mid-way by the kill: drop an ack
	// whose body is shorter than any the child writes.
	if n := len(acks); n > 0 && !strings.HasPrefix(acks[n-1].body, tag+"-") {
		acks = acks[:n-1]
	}
	return acks
}

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
