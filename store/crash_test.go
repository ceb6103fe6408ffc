package store

import (
	"bufio"
	"bytes"
	"fmt"
	randv1 "math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/topicconf"
)

// The crash test re-executes the test binary as a writer child (crashChild),
// kills it with SIGKILL at a random moment (sometimes while Open is still
// recovering), reopens the store and checks it against everything the child
// reported as acknowledged: appends, consumer offsets, topic configs and a
// checkpoint, with retention deleting the log's head in the background.
const (
	crashChildEnv = "RUNNEL_STORE_CRASH_CHILD" // the store directory
	crashModeEnv  = "RUNNEL_STORE_CRASH_MODE"
	crashTagEnv   = "RUNNEL_STORE_CRASH_TAG"
	crashTopic    = "Crash"
	crashGroup    = "CrashGroup"
	crashQueues   = 3
	// crashBudget is the child's DiskBudget: small enough that retention
	// (every crashRetention) deletes the head of the log within a few
	// cycles, and keeps Verify's full pass cheap.
	crashBudget    = 512 << 10
	crashRetention = 2 * time.Millisecond
	// crashMaxRecord bounds a child's record, so the log kept under the
	// budget can be checked: retention stops at the first record starting
	// at or after (end - budget).
	crashMaxRecord = 1 << 10
)

// crashChild prints "opening", opens the store and prints "ready <µs the
// Open took>". Then four goroutines write batches and print one line per
// acknowledged message, "A queue offset phys body", while another commits
// each queue's max offset ("O queue offset"), creates topics ("T name")
// and bumps a checkpoint ("C n"), each printed once acknowledged.
func crashChild() {
	mode, _ := strconv.Atoi(os.Getenv(crashModeEnv))
	opts := DefaultOptions(os.Getenv(crashChildEnv))
	opts.FlushMode = FlushMode(mode)
	opts.MemTableSize = 1 << 20     // rotate WALs and flush often, to crash in those paths too
	opts.CheckpointBytes = 16 << 10 // and checkpoint the queues and index often
	opts.DiskBudget = crashBudget
	opts.FileReservedTime = -1
	opts.RetentionInterval = crashRetention
	tag := os.Getenv(crashTagEnv)
	var mu sync.Mutex
	out := os.Stdout
	println := func(s string) {
		mu.Lock()
		_, _ = out.WriteString(s)
		mu.Unlock()
	}
	fail := func(what string, err error, code int) {
		fmt.Fprintln(os.Stderr, what, err)
		os.Exit(code)
	}
	println("opening\n")
	start := time.Now()
	s, err := Open(opts)
	if err != nil {
		fail("open:", err, 2)
	}
	println(fmt.Sprintf("ready %d\n", time.Since(start).Microseconds()))
	for w := 0; w < 4; w++ {
		go func(w int) {
			body := make([]byte, 0, 600)
			for i := 0; ; i++ {
				n := 1 + (i % 5)
				ms := make([]*message.MessageExt, n)
				for j := range ms {
					id := fmt.Sprintf("%s-%d-%d-%d", tag, w, i, j)
					body = append(body[:0], id...)
					body = append(body, strings.Repeat("p", (i*7+j)%500)...)
					ms[j] = msg(crashTopic, int32((w+j)%crashQueues), string(body),
						message.PropertyKeys, id, message.PropertyUniqClientMessageIDKey, id)
				}
				rs, err := s.Put(ms)
				if err != nil {
					fail("put:", err, 3)
				}
				var sb strings.Builder
				for j, r := range rs {
					fmt.Fprintf(&sb, "A %d %d %d %s\n", ms[j].QueueID, r.QueueOffset, r.CommitLogOffset, ms[j].Body)
				}
				println(sb.String())
			}
		}(w)
	}
	// Offsets are committed by this goroutine alone, each queue's growing
	// (the max offset only grows, across restarts too), so the last
	// acknowledged commit of a queue is the highest.
	// The checkpoint counts on from its stored value, so it only grows.
	k0 := 0
	if v, ok, err := s.Checkpoint("crash"); err != nil {
		fail("checkpoint:", err, 6)
	} else if ok {
		k0, _ = strconv.Atoi(string(v))
		k0 = k0 - k0%20 + 20
	}
	for k := k0; ; k++ {
		q := int32(k % crashQueues)
		off := s.MaxOffset(crashTopic, q)
		if err := s.CommitOffset(crashGroup, crashTopic, q, off); err != nil {
			fail("commit:", err, 4)
		}
		println(fmt.Sprintf("O %d %d\n", q, off))
		if k%20 == 0 {
			name := fmt.Sprintf("%s-T%d", tag, k)
			if err := s.PutTopic(topicconf.Config{TopicName: name, ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6}); err != nil {
				fail("topic:", err, 5)
			}
			println("T " + name + "\n")
			if err := s.PutCheckpoint("crash", []byte(strconv.Itoa(k))); err != nil {
				fail("checkpoint:", err, 6)
			}
			println(fmt.Sprintf("C %d\n", k))
		}
	}
}

type ack struct {
	queue     int32
	off, phys int64
	body      string
}

// crashRun is what one child acknowledged before it was killed.
type crashRun struct {
	acks       []ack
	offsets    map[int32]int64 // highest committed offset per queue
	topics     []string
	checkpoint int64 // -1: none
	ready      bool  // Open had returned before the kill
	openTime   time.Duration
}

// TestCrashRecovery kills a child writing to a store, at random moments
// and inside Open's recovery, reopens, and checks the store against what the
// child had acknowledged. 50 cycles, or 20 (two fresh stores of 10) under
// the race detector, where a cycle costs about 3 s; the test command's
// second pass, without it, runs all 50. RUNNEL_CRASH_CYCLES sets the number.
func TestCrashRecovery(t *testing.T) {
	cycles := 50
	if raceEnabled {
		cycles = 20
	}
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
	var offsets map[int32]int64
	var topics []string
	var checkpoint int64
	openTime := 2 * time.Millisecond // the child's last Open, to aim kills into the next
	killedInOpen, killsInOpen, truncated := 0, 0, 0
	truncatedInGroup := false
	for c := 0; c < cycles; c++ {
		mode := FlushMode(c % 2)
		if c%10 == 0 {
			// A fresh store every 10 cycles; within a group each reopen
			// recovers a store that was itself recovered.
			dir = fmt.Sprintf("%s/%d", root, c)
			all, offsets, topics, checkpoint = nil, map[int32]int64{}, nil, -1
			truncatedInGroup = false
		}
		// Every fifth cycle aims the kill into Open's recovery of the store
		// the previous cycle's kill left.
		inOpen := c%5 == 4
		after := time.Duration(5+rng.Intn(60)) * time.Millisecond
		if inOpen {
			after = time.Duration(rng.Int63n(int64(openTime) + 1))
			killsInOpen++
		}
		// A loaded machine writes less before each kill; a group that has
		// not yet outgrown the budget lets its ninth child write past it,
		// so every run exercises retention whatever the load.
		var untilPhys int64
		if c%10 == 8 && !truncatedInGroup {
			untilPhys = crashBudget + 128<<10
		}
		tc0 := time.Now()
		run := runCrashChild(t, dir, mode, fmt.Sprint("c", c), inOpen, after, untilPhys)
		if run.ready {
			openTime = run.openTime
		} else {
			killedInOpen++
		}
		all = append(all, run.acks...)
		for q, off := range run.offsets {
			offsets[q] = max(offsets[q], off)
		}
		topics = append(topics, run.topics...)
		checkpoint = max(checkpoint, run.checkpoint)

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
		fatal := func(format string, args ...any) {
			t.Helper()
			_ = s.Close()
			t.Fatalf("cycle %d (%v, killed in open %v): %s", c, mode, !run.ready, fmt.Sprintf(format, args...))
		}
		if err != nil || rep.Orphans != 0 {
			fatal("%+v %v", rep, err)
		}
		minPhys, maxPhys := s.MinPhysOffset(), s.MaxPhysOffset()
		if minPhys > 0 {
			truncated++
			truncatedInGroup = true
			if maxPhys-minPhys < crashBudget-crashMaxRecord {
				fatal("retention kept %d bytes [%d, %d), budget %d", maxPhys-minPhys, minPhys, maxPhys, crashBudget)
			}
		}
		// Every message ever acknowledged is where it was acknowledged,
		// with its body and index entries (checked for this cycle's and a
		// sample of older ones), unless retention deleted it.
		check := run.acks
		if len(all) > len(run.acks) {
			for i := 0; i < 50; i++ {
				check = append(check, all[rng.Intn(len(all))])
			}
		}
		for _, a := range check {
			checkAck(fatal, s, a, minPhys)
		}
		for q, want := range offsets {
			if got, ok, err := s.ConsumerOffset(crashGroup, crashTopic, q); err != nil || !ok || got < want {
				fatal("committed offset of queue %d: %d %v %v, acknowledged %d", q, got, ok, err, want)
			}
		}
		for _, name := range topics {
			if _, ok, err := s.Topic(name); err != nil || !ok {
				fatal("acknowledged topic %s: %v %v", name, ok, err)
			}
		}
		if checkpoint >= 0 {
			v, ok, err := s.Checkpoint("crash")
			if n, _ := strconv.ParseInt(string(v), 10, 64); err != nil || !ok || n < checkpoint {
				fatal("checkpoint %q %v %v, acknowledged %d", v, ok, err, checkpoint)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("cycle %d %v: ready %v, %d acks, %d records [%d, %d), %d index entries; child %v, reopen %v, verify %v, checks %v",
			c, mode, run.ready, len(run.acks), rep.Records, minPhys, maxPhys, rep.IndexEntries,
			tcOpen.Sub(tc0), tc1.Sub(tcOpen), tc2.Sub(tc1), time.Since(tc2))
	}
	t.Logf("%d cycles: %d of %d kills aimed at Open landed in it; retention had run in %d", cycles, killedInOpen, killsInOpen, truncated)
	if len(all) == 0 || len(offsets) == 0 {
		t.Fatal("no child ever acknowledged a write")
	}
	if cycles >= 20 && (killedInOpen == 0 || truncated == 0) {
		t.Fatalf("the test did not exercise what it should: %d kills in Open, retention seen in %d cycles", killedInOpen, truncated)
	}
}

// checkAck checks one acknowledged append after a reopen: readable at its
// offset with its body and found by its unique id, or, if retention deleted
// it, gone from the queue and the index alike.
func checkAck(fatal func(string, ...any), s *Store, a ack, minPhys int64) {
	id := strings.SplitN(a.body, "p", 2)[0]
	recs, err := s.QueryByUniqKey(crashTopic, id, 4)
	if err != nil {
		fatal("uniq-key lookup of %s: %v", id, err)
	}
	if a.phys < minPhys {
		if q := s.MinOffset(crashTopic, a.queue); q <= a.off || len(recs) != 0 {
			fatal("acked %+v is below the log start %d but queue min is %d and the index finds %d", a, minPhys, q, len(recs))
		}
		return
	}
	r, err := s.Get(crashTopic, a.queue, a.off, 1, 0, nil)
	if err != nil || r.Status != GetFound {
		fatal("acked %+v missing: %v %v", a, r.Status, err)
	}
	m, _ := message.DecodeMessagesRaw(r.Messages)
	if m[0].CommitLogOffset != a.phys || string(m[0].Body) != a.body {
		fatal("acked %+v reads back as phys %d body %.20q", a, m[0].CommitLogOffset, m[0].Body)
	}
	if len(recs) != 1 {
		fatal("uniq-key lookup of %s found %d records", id, len(recs))
	}
}

// runCrashChild starts a child on dir and SIGKILLs it after the given
// delay, counted from its "opening" line if inOpen, else from "ready".
// With untilPhys > 0 (and !inOpen) the kill's delay starts only once the
// child has acknowledged a message at or past that log offset.
func runCrashChild(t *testing.T, dir string, mode FlushMode, tag string, inOpen bool, after time.Duration, untilPhys int64) crashRun {
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
	sc.Split(wholeLines)
	if !sc.Scan() || sc.Text() != "opening" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child did not start: %q %s", sc.Text(), stderr.String())
	}
	killed := make(chan struct{})
	kill := func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		close(killed)
	}
	var timer *time.Timer
	if inOpen {
		timer = time.AfterFunc(after, kill)
	}
	run := crashRun{offsets: map[int32]int64{}, checkpoint: -1}
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "ready "); ok && !run.ready {
			run.ready = true
			us, _ := strconv.ParseInt(rest, 10, 64)
			run.openTime = time.Duration(us) * time.Microsecond
			if !inOpen && untilPhys <= 0 {
				timer = time.AfterFunc(after, kill)
			}
			continue
		}
		f := strings.SplitN(line, " ", 5)
		switch {
		case len(f) == 5 && f[0] == "A":
			q, _ := strconv.Atoi(f[1])
			off, _ := strconv.ParseInt(f[2], 10, 64)
			phys, _ := strconv.ParseInt(f[3], 10, 64)
			run.acks = append(run.acks, ack{int32(q), off, phys, f[4]})
			if timer == nil && untilPhys > 0 && phys >= untilPhys {
				timer = time.AfterFunc(after, kill)
			}
		case len(f) == 3 && f[0] == "O":
			q, err1 := strconv.Atoi(f[1])
			off, err2 := strconv.ParseInt(f[2], 10, 64)
			if err1 == nil && err2 == nil {
				run.offsets[int32(q)] = max(run.offsets[int32(q)], off)
			}
		case len(f) == 2 && f[0] == "T" && strings.HasPrefix(f[1], tag+"-T"):
			run.topics = append(run.topics, f[1])
		case len(f) == 2 && f[0] == "C":
			if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				run.checkpoint = max(run.checkpoint, n)
			}
		}
	}
	if timer == nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("child stopped before it was ready: %s", stderr.String())
	}
	<-killed
	timer.Stop()
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("child exited on its own: %v %s", err, stderr.String())
	}
	return run
}

// wholeLines splits like bufio.ScanLines but drops a last line without its
// newline: the kill cut it, and it may be a prefix of what was acknowledged.
func wholeLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), nil, nil
	}
	return 0, nil, nil
}
