package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/message"
)

// A single-threaded model check over puts, retention, clean reopen and
// crash reopen: every fifth step and after each retention, reopen and
// crash, every queue and every key lookup is compared with the model.
//
// 40 seeds take about 5 s, 180 s under the race detector, where 6 run
// (the test command's second pass, without it, runs all 40);
// RUNNEL_MODEL_SEEDS sets the number.
func TestSequentialModel(t *testing.T) {
	seeds := uint64(40)
	if raceEnabled {
		seeds = 6
	}
	if n, err := strconv.ParseUint(os.Getenv("RUNNEL_MODEL_SEEDS"), 10, 64); err == nil {
		seeds = n
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { modelSeq(t, seed) })
	}
}

func modelSeq(t *testing.T, seed uint64) {
	fs := vfs.NewCrashableMem()
	clock := fakeclock.New(t0)
	opts := memOptions(fs, clock)
	opts.FileReservedTime = 30 * time.Second
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	r := rand.New(rand.NewPCG(seed, seed))
	var all []modelRec
	topics := []string{"A", "B"}
	tags := []string{"ta", "tb", "tc"}
	id := 0
	check := func(step string) {
		t.Helper()
		minPhys := s.MinPhysOffset()
		// Queues.
		byQ := map[QueueID][]modelRec{}
		for _, rec := range all {
			qid := QueueID{Topic: rec.topic, ID: rec.q}
			byQ[qid] = append(byQ[qid], rec)
		}
		for qid, recs := range byQ {
			lo, hi := s.MinOffset(qid.Topic, qid.ID), s.MaxOffset(qid.Topic, qid.ID)
			if hi != int64(len(recs)) {
				t.Fatalf("%s: %v max %d, want %d", step, qid, hi, len(recs))
			}
			// expected min: first record at or after minPhys
			wantLo := int64(len(recs))
			for _, rec := range recs {
				if rec.phys >= minPhys {
					wantLo = rec.off
					break
				}
			}
			if lo != wantLo {
				t.Fatalf("%s: %v min %d, want %d (minPhys %d)", step, qid, lo, wantLo, minPhys)
			}
			for off := lo; off < hi; {
				maxMsgs := 1 + r.IntN(70)
				res, err := s.Get(qid.Topic, qid.ID, off, maxMsgs, 1<<20, nil)
				if err != nil || res.Status != GetFound {
					t.Fatalf("%s: get %v@%d: %+v %v", step, qid, off, res, err)
				}
				ms, _ := message.DecodeMessagesRaw(res.Messages)
				for i, m := range ms {
					want := recs[off+int64(i)]
					if m.QueueOffset != off+int64(i) || !bytes.HasPrefix(m.Body, []byte(want.body+"|")) {
						t.Fatalf("%s: get %v@%d: #%d %d %q", step, qid, off, i, m.QueueOffset, m.Body)
					}
				}
				if res.NextBeginOffset != off+int64(res.Count) {
					t.Fatalf("%s: next %d", step, res.NextBeginOffset)
				}
				off = res.NextBeginOffset
			}
			for try := 0; try < 5 && lo < hi; try++ {
				tag := tags[r.IntN(3)]
				start := lo + r.Int64N(hi-lo)
				maxMsgs := 1 + r.IntN(40)
				res, err := s.Get(qid.Topic, qid.ID, start, maxMsgs, 1<<20, newTagSet(message.TagsHashCode(tag)))
				if err != nil {
					t.Fatal(err)
				}
				maxMsgs = min(maxMsgs, s.opts.MaxTransferCount)
				var want []int64
				next := start
				for o := start; o < hi && o < start+int64(max(minScan, maxMsgs)); o++ {
					if len(want) == maxMsgs {
						break
					}
					next = o + 1
					if recs[o].tag == tag {
						want = append(want, o)
					}
				}
				if !slices.Equal(res.QueueOffsets, want) || res.NextBeginOffset != next {
					t.Fatalf("%s: filtered get %v@%d max %d tag %s: %v next %d, want %v next %d", step, qid, start, maxMsgs, tag, res.QueueOffsets, res.NextBeginOffset, want, next)
				}
				if len(want) == 0 && res.Status != GetNoMatchedMessage {
					t.Fatalf("%s: status %v", step, res.Status)
				}
			}
			// Statuses at the edges.
			if res, _ := s.Get(qid.Topic, qid.ID, hi, 1, 1<<20, nil); res.Status != GetOffsetOverflowOne && hi > 0 {
				t.Fatalf("%s: at max: %v", step, res.Status)
			}
			if lo > 0 {
				if res, _ := s.Get(qid.Topic, qid.ID, lo-1, 1, 1<<20, nil); res.Status != GetOffsetTooSmall || res.NextBeginOffset != lo {
					t.Fatalf("%s: below min: %v %d", step, res.Status, res.NextBeginOffset)
				}
			}
			// OffsetByTime and QueueEntry.
			if lo < hi {
				k := lo + r.Int64N(hi-lo)
				e, err := s.QueueEntry(qid.Topic, qid.ID, k)
				if err != nil || e.PhysOffset != recs[k].phys {
					t.Fatalf("%s: entry %v@%d: %+v %v want phys %d", step, qid, k, e, err, recs[k].phys)
				}
				got, err := s.OffsetByTime(qid.Topic, qid.ID, e.StoreTimestamp)
				want := k
				for want > lo && recs[want-1].ts >= e.StoreTimestamp {
					want--
				}
				if err != nil || got != want {
					t.Fatalf("%s: offset by time %v %d: %d, want %d", step, qid, e.StoreTimestamp, got, want)
				}
			}
		}
		// Lookups.
		for _, topic := range topics {
			for k := 0; k < 11; k++ {
				key := fmt.Sprintf("k%d", k)
				var want []int64
				for _, rec := range all {
					if rec.topic == topic && rec.key == key && rec.phys >= minPhys {
						want = append(want, rec.phys)
					}
				}
				recs, err := s.QueryByKey(topic, key, 100000, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				var got []int64
				for _, rec := range recs {
					m, _, _ := message.DecodeStoredMessage(rec, false)
					got = append(got, m.CommitLogOffset)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s: query %s/%s: %v, want %v", step, topic, key, got, want)
				}
				if len(want) > 2 {
					from := want[len(want)/2]
					recs, _ := s.QueryByKeyFrom(topic, key, 100000, from)
					if len(recs) != len(want)-len(want)/2 {
						t.Fatalf("%s: from %d: %d, want %d", step, from, len(recs), len(want)-len(want)/2)
					}
					// time range
					var wantT []int64
					var b, e int64
					for _, rec := range all {
						if rec.phys == want[1] {
							b = rec.ts
						}
						if rec.phys == want[len(want)-2] {
							e = rec.ts
						}
					}
					for _, rec := range all {
						if rec.topic == topic && rec.key == key && rec.phys >= minPhys && rec.ts >= b && rec.ts <= e {
							wantT = append(wantT, rec.phys)
						}
					}
					recs, _ = s.QueryByKey(topic, key, 100000, b, e)
					if len(recs) != len(wantT) {
						t.Fatalf("%s: time [%d,%d]: %d, want %d", step, b, e, len(recs), len(wantT))
					}
					recs, _ = s.QueryByKey(topic, key, 2, 0, 0)
					if len(recs) != 2 {
						t.Fatalf("%s: maxNum 2: %d records", step, len(recs))
					}
					if m, _, _ := message.DecodeStoredMessage(recs[1], false); m.CommitLogOffset != want[1] {
						t.Fatalf("%s: maxNum 2: second record at %d, want %d", step, m.CommitLogOffset, want[1])
					}
				}
			}
		}
		for _, rec := range all {
			if rec.phys < minPhys || r.IntN(20) != 0 {
				continue
			}
			recs, err := s.QueryByUniqKey(rec.topic, rec.uniq, 4)
			if err != nil || len(recs) != 1 {
				t.Fatalf("%s: uniq %s: %d %v", step, rec.uniq, len(recs), err)
			}
		}
		if rep, err := s.Verify(); err != nil {
			t.Fatalf("%s: verify %+v %v", step, rep, err)
		}
	}
	for step := 0; step < 60; step++ {
		switch x := r.IntN(10); {
		case x < 7:
			k := 1
			if r.IntN(2) == 0 {
				k = 1 + r.IntN(130)
			}
			ms, recs := randomModelBatch(r, k, func() int { id++; return id }, topics, tags)
			res := mustPut(t, s, ms...)
			for j, pr := range res {
				recs[j].off, recs[j].phys, recs[j].ts = pr.QueueOffset, pr.CommitLogOffset, pr.StoreTimestamp
			}
			all = append(all, recs...)
			clock.Advance(time.Duration(r.IntN(3000)) * time.Millisecond)
		case x == 7:
			clock.Advance(time.Duration(r.IntN(30)) * time.Second)
			if _, err := s.Retain(clock.Now()); err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("step %d retain", step))
		case x == 8:
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if s, err = Open(opts); err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("step %d reopen", step))
		case x == 9:
			if err := s.wal.SyncAll(); err != nil {
				t.Fatal(err)
			}
			crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
			_ = s.Close()
			fs = crashed
			opts.FS = fs
			if s, err = Open(opts); err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("step %d crash", step))
		}
		if step%5 == 0 {
			check(fmt.Sprintf("step %d", step))
		}
	}
	check("end")
	t.Logf("log [%d,%d) %d msgs", s.MinPhysOffset(), s.MaxPhysOffset(), len(all))
}
