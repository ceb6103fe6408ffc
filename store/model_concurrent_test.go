package store

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store/index"
)

// randomModelMessage makes message id of a model test: a random topic,
// queue, tag and padding, key k<id mod 11> plus a key of its own, and
// sometimes no StoreHost (the store fills it in).
// randomModelBatch draws k messages for the model tests, numbered by next.
func randomModelBatch(r *rand.Rand, k int, next func() int, topics, tags []string) ([]*message.MessageExt, []modelRec) {
	ms, recs := make([]*message.MessageExt, 0, k), make([]modelRec, 0, k)
	for j := 0; j < k; j++ {
		rec, m := randomModelMessage(r, next(), topics, tags)
		ms, recs = append(ms, m), append(recs, rec)
	}
	return ms, recs
}

func randomModelMessage(r *rand.Rand, id int, topics, tags []string) (modelRec, *message.MessageExt) {
	rec := modelRec{topic: topics[r.IntN(len(topics))], q: int32(r.IntN(3)), body: fmt.Sprintf("m%d", id),
		key: fmt.Sprintf("k%d", id%11), uniq: fmt.Sprintf("u%d", id), tag: tags[r.IntN(len(tags))]}
	m := msg(rec.topic, rec.q, rec.body+"|"+string(make([]byte, r.IntN(200))), message.PropertyKeys, rec.key+" x"+rec.uniq,
		message.PropertyUniqClientMessageIDKey, rec.uniq, message.PropertyTags, rec.tag)
	if r.IntN(4) == 0 {
		m.StoreHost = netip.AddrPort{}
	}
	return rec, m
}

type modelRec struct {
	topic string
	q     int32
	off   int64
	phys  int64
	body  string
	key   string
	uniq  string
	tag   string
	ts    int64
}

// Writers, readers (Get with/without filters, lookups) and retention run
// at once; every answer is checked against what the writers were told.
func TestConcurrentModel(t *testing.T) {
	fs := vfs.NewMem()
	clock := fakeclock.New(t0)
	opts := memOptions(fs, clock)
	opts.DiskBudget = 96 << 10
	s := mustOpen(t, opts)
	old := truncateStep
	truncateStep = 8 << 10
	defer func() { truncateStep = old }()

	var mu sync.Mutex
	byQ := map[QueueID]map[int64]modelRec{}
	byKey := map[string][]modelRec{} // topic+"/"+key
	byPhys := map[int64]modelRec{}
	topics := []string{"A", "B"}
	tags := []string{"ta", "tb", "tc"}

	var errs []string
	var emu sync.Mutex
	fail := func(f string, a ...any) {
		emu.Lock()
		if len(errs) < 20 {
			errs = append(errs, fmt.Sprintf(f, a...))
		}
		emu.Unlock()
	}

	var seq sync.Mutex
	n := 0
	var wgW sync.WaitGroup
	put := func(w, i int) bool {
		r := rand.New(rand.NewPCG(uint64(w), uint64(i)))
		k := 1
		if r.IntN(3) == 0 {
			k = 1 + r.IntN(70)
		}
		ms, recs := randomModelBatch(r, k, func() int {
			seq.Lock()
			defer seq.Unlock()
			n++
			return n
		}, topics, tags)
		res, err := s.Put(ms)
		if err != nil {
			fail("put: %v", err)
			return false
		}
		mu.Lock()
		for j, pr := range res {
			rec := recs[j]
			rec.off, rec.phys = pr.QueueOffset, pr.CommitLogOffset
			id := QueueID{Topic: rec.topic, ID: rec.q}
			if byQ[id] == nil {
				byQ[id] = map[int64]modelRec{}
			}
			if _, dup := byQ[id][rec.off]; dup {
				fail("offset %v %d assigned twice", id, rec.off)
			}
			byQ[id][rec.off] = rec
			byKey[rec.topic+"/"+rec.key] = append(byKey[rec.topic+"/"+rec.key], rec)
			byPhys[rec.phys] = rec
		}
		mu.Unlock()
		return true
	}
	for w := 0; w < 2; w++ {
		wgW.Add(1)
		go func() {
			defer wgW.Done()
			for i := 0; i < 400 && put(w, i); i++ {
			}
		}()
	}
	stopR := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // retention
		defer wg.Done()
		for {
			select {
			case <-stopR:
				return
			default:
			}
			if _, err := s.Retain(clock.Now()); err != nil {
				fail("retain: %v", err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	go func() { // Get
		defer wg.Done()
		r := rand.New(rand.NewPCG(7, 7))
		for {
			select {
			case <-stopR:
				return
			default:
			}
			id := QueueID{Topic: topics[r.IntN(2)], ID: int32(r.IntN(3))}
			min, max := s.MinOffset(id.Topic, id.ID), s.MaxOffset(id.Topic, id.ID)
			if max == 0 {
				continue
			}
			off := min + r.Int64N(max-min+1)
			var f Filter
			var want string
			if r.IntN(2) == 0 {
				want = tags[r.IntN(3)]
				f = newTagSet(message.TagsHashCode(want))
			}
			maxMsgs := 1 + r.IntN(40)
			res, err := s.Get(id.Topic, id.ID, off, maxMsgs, 1<<20, f)
			if err != nil {
				fail("get: %v", err)
				return
			}
			ms, err := message.DecodeMessagesRaw(res.Messages)
			if err != nil || len(ms) != res.Count || len(res.QueueOffsets) != res.Count {
				fail("get %v@%d: decode %v, %d/%d/%d", id, off, err, len(ms), res.Count, len(res.QueueOffsets))
				continue
			}
			if res.Count > maxMsgs {
				fail("get %v@%d: %d > maxMsgs %d", id, off, res.Count, maxMsgs)
			}
			waitModel := func(ok func() bool) {
				for try := 0; try < 200; try++ {
					mu.Lock()
					if ok() {
						return
					}
					mu.Unlock()
					time.Sleep(time.Millisecond)
				}
				mu.Lock()
			}
			waitModel(func() bool {
				for _, qo := range res.QueueOffsets {
					if _, ok := byQ[id][qo]; !ok {
						return false
					}
				}
				return true
			})
			for i, m := range ms {
				qo := res.QueueOffsets[i]
				rec, ok := byQ[id][qo]
				if !ok || m.Topic != id.Topic || m.QueueID != id.ID || m.QueueOffset != qo || !bytes.HasPrefix(m.Body, []byte(rec.body+"|")) {
					fail("get %v@%d: message %d (offset %d) is %s/%d@%d %q, model %+v", id, off, i, qo, m.Topic, m.QueueID, m.QueueOffset, m.Body, rec)
				}
				if f != nil && m.Tags() != want {
					fail("get %v@%d: tag %q passed filter %q", id, off, m.Tags(), want)
				}
				if i > 0 && qo <= res.QueueOffsets[i-1] {
					fail("get %v@%d: offsets not increasing %v", id, off, res.QueueOffsets)
				}
				if f == nil && i > 0 && qo != res.QueueOffsets[i-1]+1 {
					fail("get %v@%d: hole without filter %v", id, off, res.QueueOffsets)
				}
			}
			if res.Count > 0 {
				if res.QueueOffsets[0] < off {
					fail("get %v@%d: first %d below requested", id, off, res.QueueOffsets[0])
				}
				if f == nil && res.NextBeginOffset != res.QueueOffsets[res.Count-1]+1 {
					fail("get %v@%d: next %d after last %d", id, off, res.NextBeginOffset, res.QueueOffsets[res.Count-1])
				}
				if f == nil && res.QueueOffsets[0] != off && res.QueueOffsets[0] > s.MinOffset(id.Topic, id.ID) && s.modelExists(byQ[id][off].phys) {
					fail("get %v@%d: skipped to %d, min %d", id, off, res.QueueOffsets[0], s.MinOffset(id.Topic, id.ID))
				}
			}
			if res.Status == GetFound && res.Count == 0 || res.Status != GetFound && res.Count > 0 {
				fail("get %v@%d: status %v count %d", id, off, res.Status, res.Count)
			}
			if f == nil && res.Count == 0 && off < max && res.NextBeginOffset <= off {
				// Below the max there is a message or a minimum above off.
				fail("get %v@%d (max %d): %v, nothing, next %d: the consumer is stuck", id, off, max, res.Status, res.NextBeginOffset)
			}
			if f != nil && res.Status == GetFound {
				// Every message skipped between requested and returned must not match.
				for o := off; o < res.QueueOffsets[0]; o++ {
					if rec, ok := byQ[id][o]; ok && rec.tag == want && o >= s.MinOffset(id.Topic, id.ID) && s.modelExists(rec.phys) {
						fail("get %v@%d filter %s: skipped matching offset %d (first returned %d)", id, off, want, o, res.QueueOffsets[0])
						break
					}
				}
			}
			mu.Unlock()
		}
	}()
	go func() { // lookups
		defer wg.Done()
		r := rand.New(rand.NewPCG(9, 9))
		for {
			select {
			case <-stopR:
				return
			default:
			}
			topic, key := topics[r.IntN(2)], fmt.Sprintf("k%d", r.IntN(11))
			mu.Lock()
			before := slices.Clone(byKey[topic+"/"+key])
			mu.Unlock()
			minBefore := s.minPhys.Load()
			recs, err := s.QueryByKey(topic, key, 100000, 0, 0)
			if err != nil {
				fail("query: %v", err)
				return
			}
			minAfter := s.minPhys.Load()
			got := map[int64]bool{}
			var last int64 = -1
			for try := 0; try < 200; try++ {
				mu.Lock()
				all := byKey[topic+"/"+key]
				n := 0
				for _, rec := range recs {
					m, _, _ := message.DecodeStoredMessage(rec, false)
					if m != nil && slices.ContainsFunc(all, func(x modelRec) bool { return x.phys == m.CommitLogOffset }) {
						n++
					}
				}
				mu.Unlock()
				if n == len(recs) {
					break
				}
				time.Sleep(time.Millisecond)
			}
			mu.Lock()
			all := byKey[topic+"/"+key]
			for _, rec := range recs {
				m, _, err := message.DecodeStoredMessage(rec, false)
				if err != nil {
					fail("query decode: %v", err)
					continue
				}
				if m.CommitLogOffset <= last {
					fail("query %s/%s: not oldest first / duplicate at %d", topic, key, m.CommitLogOffset)
				}
				last = m.CommitLogOffset
				got[m.CommitLogOffset] = true
				if m.Topic != topic || !slices.Contains(m.Keys(), key) || m.CommitLogOffset < minBefore {
					fail("query %s/%s: wrong record %s %v at %d", topic, key, m.Topic, m.Keys(), m.CommitLogOffset)
				}
				if !slices.ContainsFunc(all, func(x modelRec) bool { return x.phys == m.CommitLogOffset }) {
					fail("query %s/%s: record at %d not in model", topic, key, m.CommitLogOffset)
				}
			}
			mu.Unlock()
			for _, rec := range before {
				if _, err := s.ReadRecord(rec.phys); rec.phys >= minAfter && !got[rec.phys] && err == nil {
					again, _ := s.QueryByKey(topic, key, 100000, 0, 0)
					found := false
					for _, a := range again {
						m, _, _ := message.DecodeStoredMessage(a, false)
						found = found || m.CommitLogOffset == rec.phys
					}
					fail("query %s/%s: missed record at %d (min %d..%d); %d results, again found=%v; %s", topic, key, rec.phys, minBefore, minAfter, len(recs), found, s.modelSegs(rec.phys))
				}
			}
			// Unique key of a random recent record.
			if len(before) > 0 {
				rec := before[len(before)-1]
				u, err := s.QueryByUniqKey(topic, rec.uniq, 4)
				if err != nil {
					fail("uniq: %v", err)
				} else if len(u) != 1 && rec.phys >= s.minPhys.Load() {
					fail("uniq %s: %d records", rec.uniq, len(u))
				}
			}
		}
	}()
	wgW.Wait()
	close(stopR)
	wg.Wait()
	for _, e := range errs {
		t.Error(e)
	}
	if rep, err := s.Verify(); err != nil {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	t.Logf("%d messages, log [%d, %d)", n, s.minPhys.Load(), s.readablePhys.Load())
}

// modelSegs describes the index segments around phys, for a failure message.
func (s *Store) modelSegs(phys int64) string {
	s.segMu.RLock()
	out := fmt.Sprintf("open@%d(%d) sealed:", s.openSeg.Start, s.openSeg.Dir.Entries)
	for _, g := range s.sealed {
		out += fmt.Sprintf(" [%d,%d)", g.Start, g.Dir.End)
	}
	s.segMu.RUnlock()
	out += " pebble:"
	err := index.Segments(s.db, func(st int64, d index.Dir) (bool, error) {
		if st <= phys && phys < d.End {
			out += fmt.Sprintf(" *[%d,%d)*", st, d.End)
		} else if d.End > phys-20000 && st < phys+20000 {
			out += fmt.Sprintf(" [%d,%d)", st, d.End)
		}
		return true, nil
	})
	if err != nil {
		out += " " + err.Error()
	}
	return out
}

// modelExists reports whether the record at phys is still readable.
func (s *Store) modelExists(phys int64) bool {
	_, err := s.ReadRecord(phys)
	return err == nil
}
