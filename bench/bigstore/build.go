package main

import (
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"syscall"
	"time"

	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/topicconf"
)

// buildSpec is a store to build: msgs messages of size-byte bodies in one
// queue of topic, each with a UNIQ_KEY as our client and the official ones
// send (so the index holds what a real store's does).
type buildSpec struct {
	Dir   string
	Msgs  int64
	Size  int
	Batch int
	Topic string
}

// buildResult is what building cost.
type buildResult struct {
	Took      time.Duration
	DiskBytes int64
	MaxOffset int64
}

// build writes the store through the store package's own append path
// (Put, in batches of spec.Batch), in the directory layout the broker opens
// as its --store-dir, with the topic's config beside the messages, so the
// broker serves the topic as it finds it. It refuses a directory that
// already holds a store. Progress goes to w every tenth of the way.
func build(spec buildSpec, w io.Writer) (buildResult, error) {
	if spec.Msgs < 1 || spec.Size < 1 || spec.Batch < 1 {
		return buildResult{}, fmt.Errorf("bigstore: messages, size and batch must be at least 1")
	}
	if n, err := diskBytes(spec.Dir); err == nil && n > 0 {
		return buildResult{}, fmt.Errorf("bigstore: %s is not empty; build into a new directory", spec.Dir)
	}
	start := time.Now()
	opts := store.DefaultOptions(spec.Dir)
	opts.RetentionInterval = -1 // nothing is old enough, and a build should not spend on looking
	s, err := store.Open(opts)
	if err != nil {
		return buildResult{}, err
	}
	tc := topicconf.New(spec.Topic)
	tc.ReadQueueNums, tc.WriteQueueNums = 1, 1
	if err := s.PutTopic(tc); err != nil {
		_ = s.Close()
		return buildResult{}, err
	}
	body := make([]byte, spec.Size)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	ids := message.NewUniqIDGenerator(opts.StoreHost.Addr())
	batch := make([]*message.MessageExt, spec.Batch)
	for i := range batch {
		batch[i] = &message.MessageExt{Message: message.Message{Topic: spec.Topic, Body: body, Properties: map[string]string{}}}
	}
	step := max(spec.Msgs/10, 1)
	for done := int64(0); done < spec.Msgs; {
		n := int(min(int64(spec.Batch), spec.Msgs-done))
		now := time.Now().UnixMilli()
		for _, m := range batch[:n] {
			m.BornTimestamp = now
			m.Properties[message.PropertyUniqClientMessageIDKey] = ids.Next()
		}
		if _, err := s.Put(batch[:n]); err != nil {
			_ = s.Close()
			return buildResult{}, fmt.Errorf("bigstore: put at %d: %w", done, err)
		}
		if done/step != (done+int64(n))/step {
			el := time.Since(start)
			fmt.Fprintf(w, "bigstore: %d messages in %v (%.0f msg/s)\n", done+int64(n), el.Round(time.Second), float64(done+int64(n))/el.Seconds())
		}
		done += int64(n)
	}
	res := buildResult{MaxOffset: s.MaxOffset(spec.Topic, 0)}
	if err := s.Close(); err != nil {
		return buildResult{}, err
	}
	res.Took = time.Since(start)
	res.DiskBytes, err = diskBytes(spec.Dir)
	return res, err
}

// diskBytes is the disk dir's files take (their allocated blocks, as du
// counts them); 0 for a directory that does not exist.
func diskBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if d == nil && n == 0 {
				return fs.SkipAll // dir itself is missing
			}
			return err
		}
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			}
		}
		return nil
	})
	return n, err
}
