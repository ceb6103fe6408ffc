package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/runnelmq/runnel/bench/internal/proc"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// measureSpec is one measurement: Rounds rounds, each running the broker
// binary Bin on every store of Dirs in turn.
type measureSpec struct {
	Bin    string
	Dirs   []string // the first is the big store, the second the small
	Topic  string
	Rounds int
	Pulls  int // head pulls per round
	Holds  int // held pulls per round
	// Behind is how far below the queue's end the head pulls start: they
	// cycle through offsets max-Behind .. max-1.
	Behind int64
}

// storeRound is what one round measured on one store.
type storeRound struct {
	Serving         time.Duration // exec to the serving line
	SettleCPU       time.Duration // broker CPU from exec until it was idle (see settle)
	Pull, PullP99   time.Duration // head pull latency, median and 99th percentile
	PullCPU         time.Duration // broker CPU per head pull
	Held, HeldP99   time.Duration // held pull: from the send of a new message to the pull's answer
	HeldCPU         time.Duration // broker CPU per held pull (the send included)
	MaxOffsetBefore int64
}

var servingLine = regexp.MustCompile(`^broker: serving on (\S+)`)

// measureStore restarts the broker on dir and measures it.
func measureStore(ctx context.Context, spec measureSpec, dir string) (storeRound, error) {
	var r storeRound
	p, addrs, err := proc.Start(ctx, spec.Bin, []string{"--store-dir", dir, "--listen", "127.0.0.1:0",
		"--grpc-listen", "", "--log-level", "warn", "--auto-create-topic=false"}, servingLine)
	if err != nil {
		return r, err
	}
	defer p.Stop()
	r.Serving = p.Serving
	r.SettleCPU = settle(p)
	addr := addrs[0]
	cl := remoting.NewClient(remoting.DefaultClientConfig())
	defer cl.Close()
	end, err := maxOffset(ctx, cl, addr, spec.Topic)
	if err != nil {
		return r, err
	}
	if end < spec.Behind {
		return r, fmt.Errorf("bigstore: %s holds %d messages in %s, fewer than -behind %d", dir, end, spec.Topic, spec.Behind)
	}
	r.MaxOffsetBefore = end
	pull := func(off int64) (*protocol.Command, error) {
		return invoke(ctx, cl, addr, protocol.NewRequest(protocol.ReqPullMessage, pullHeader(spec.Topic, off, 0).Encode(), nil), protocol.RespSuccess)
	}
	// A warm-up, unmeasured: the first pulls load the queue's last chunk
	// and the log's last blocks.
	for i := range min(spec.Pulls/10+1, 200) {
		if _, err := pull(end - 1 - int64(i)%spec.Behind); err != nil {
			return r, err
		}
	}
	lat := make([]time.Duration, 0, spec.Pulls)
	c0 := p.CPU()
	for i := range spec.Pulls {
		start := time.Now()
		if _, err := pull(end - 1 - int64(i)%spec.Behind); err != nil {
			return r, err
		}
		lat = append(lat, time.Since(start))
	}
	r.PullCPU = (p.CPU() - c0) / time.Duration(spec.Pulls)
	r.Pull, r.PullP99 = percentiles(lat)

	lat = lat[:0]
	c0 = p.CPU()
	for range spec.Holds {
		d, err := heldPull(ctx, cl, addr, spec.Topic, &end)
		if err != nil {
			return r, err
		}
		lat = append(lat, d)
	}
	r.HeldCPU = (p.CPU() - c0) / time.Duration(max(spec.Holds, 1))
	r.Held, r.HeldP99 = percentiles(lat)
	return r, nil
}

// settle waits until the broker is idle (at most a clock tick of CPU in
// settleWindow, or settleMax has passed) and returns its CPU since exec:
// Pebble loads every table's statistics in the background after it opens,
// which would otherwise be counted to the first pulls.
func settle(p *proc.Proc) time.Duration {
	deadline := time.Now().Add(settleMax)
	for time.Now().Before(deadline) {
		c := p.CPU()
		time.Sleep(settleWindow)
		if p.CPU()-c <= proc.Tick() {
			break
		}
	}
	return p.CPU()
}

const (
	settleWindow = 200 * time.Millisecond
	settleMax    = 20 * time.Second
)

// holdDelay is how long a held pull is given to reach the broker and be
// parked before the message that answers it is sent. (Were the message
// first, the pull would be answered at once: still an answer, timed the
// same way.)
const holdDelay = 2 * time.Millisecond

// heldPull sends a pull at the queue's end (*end) that the broker holds,
// then a message to the queue, and returns the time from that send to the
// pull's answer; *end moves past the new message.
func heldPull(ctx context.Context, cl *remoting.Client, addr, topic string, end *int64) (time.Duration, error) {
	type answer struct {
		at  time.Time
		err error
	}
	done := make(chan answer, 1)
	off := *end
	go func() {
		_, err := invoke(ctx, cl, addr, protocol.NewRequest(protocol.ReqPullMessage,
			pullHeader(topic, off, protocol.PullFlagSuspend).Encode(), nil), protocol.RespSuccess)
		done <- answer{time.Now(), err}
	}()
	time.Sleep(holdDelay)
	start := time.Now()
	hdr := protocol.SendMessageRequestHeader{ProducerGroup: "bigstore", Topic: topic, DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 1, QueueID: 0, BornTimestamp: start.UnixMilli()}
	if _, err := invoke(ctx, cl, addr, protocol.NewRequest(protocol.ReqSendMessage, hdr.Encode(), []byte("held pull answer")), protocol.RespSuccess); err != nil {
		<-done
		return 0, err
	}
	a := <-done
	if a.err != nil {
		return 0, a.err
	}
	*end = off + 1
	return a.at.Sub(start), nil
}

// pullHeader is a pull carrying its subscription ("*"), as a lite pull
// consumer sends it: no heartbeat needed.
func pullHeader(topic string, off int64, flags int32) protocol.PullMessageRequestHeader {
	return protocol.PullMessageRequestHeader{ConsumerGroup: "bigstore", Topic: topic, QueueID: 0, QueueOffset: off,
		MaxMsgNums: 32, SysFlag: flags | protocol.PullFlagSubscription, Subscription: "*",
		SuspendTimeoutMillis: 15000, ExpressionType: protocol.ExpressionTypeTag}
}

func maxOffset(ctx context.Context, cl *remoting.Client, addr, topic string) (int64, error) {
	hdr := protocol.GetMaxOffsetRequestHeader{QueueRequestHeader: protocol.QueueRequestHeader{Topic: topic, QueueID: 0}}
	resp, err := invoke(ctx, cl, addr, protocol.NewRequest(protocol.ReqGetMaxOffset, hdr.Encode(), nil), protocol.RespSuccess)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(resp.Ext("offset"), 10, 64)
}

// invoke sends req and returns the answer, an error unless its code is want.
func invoke(ctx context.Context, cl *remoting.Client, addr string, req *protocol.Command, want int16) (*protocol.Command, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := cl.Invoke(ctx, addr, req)
	if err != nil {
		return nil, err
	}
	if resp.Code != want {
		return nil, fmt.Errorf("bigstore: request %d: code %d %s", req.Code, resp.Code, resp.Remark)
	}
	return resp, nil
}

// percentiles are the median and 99th percentile of d (sorted in place).
func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	slices.Sort(d)
	return d[len(d)/2], d[min(len(d)*99/100, len(d)-1)]
}

func runMeasure(args []string) error {
	fs := flag.NewFlagSet("measure", flag.ExitOnError)
	spec := measureSpec{}
	big := fs.String("big", "", "the big store's directory")
	small := fs.String("small", "", "the small store's directory")
	fs.StringVar(&spec.Bin, "bin", "", "the broker binary (go build ./cmd/broker)")
	fs.StringVar(&spec.Topic, "topic", defaultTopic, "the topic the stores were built with")
	fs.IntVar(&spec.Rounds, "rounds", 5, "rounds; each restarts the broker on both stores")
	fs.IntVar(&spec.Pulls, "pulls", 20000, "head pulls per round and store")
	fs.IntVar(&spec.Holds, "holds", 500, "held pulls per round and store")
	fs.Int64Var(&spec.Behind, "behind", 4, "head pulls start 1..behind messages below the queue's end")
	_ = fs.Parse(args)
	if spec.Bin == "" || *big == "" || *small == "" {
		return errors.New("bigstore measure: -bin, -big and -small are required")
	}
	if spec.Rounds < 1 || spec.Pulls < 1 || spec.Holds < 0 || spec.Behind < 1 {
		return errors.New("bigstore measure: -rounds, -pulls and -behind must be at least 1, -holds at least 0")
	}
	spec.Dirs = []string{*big, *small}
	// No name server: the broker serves without registering.
	if err := os.Setenv("NAMESRV_ADDR", ""); err != nil {
		return err
	}
	rounds, err := measure(context.Background(), spec, func(round int, dir string, r storeRound) {
		fmt.Printf("round %d %-24s serving %7.1f ms (cpu to idle %6.1f ms)  pull p50 %6.1f p99 %7.1f us, cpu %5.1f us/pull  held p50 %6.1f p99 %7.1f us, cpu %5.1f us/held  (max offset %d)\n",
			round, dir, ms(r.Serving), ms(r.SettleCPU), us(r.Pull), us(r.PullP99), us(r.PullCPU), us(r.Held), us(r.HeldP99), us(r.HeldCPU), r.MaxOffsetBefore)
	})
	if err != nil {
		return err
	}
	report(rounds)
	return nil
}

// measure runs spec's rounds, alternating the stores within each round
// and which goes first from one round to the next.
func measure(ctx context.Context, spec measureSpec, each func(round int, dir string, r storeRound)) ([][2]storeRound, error) {
	out := make([][2]storeRound, 0, spec.Rounds)
	for round := range spec.Rounds {
		var rr [2]storeRound
		for k := range 2 {
			i := (round + k) % 2
			r, err := measureStore(ctx, spec, spec.Dirs[i])
			if err != nil {
				return nil, err
			}
			each(round, spec.Dirs[i], r)
			rr[i] = r
		}
		out = append(out, rr)
	}
	return out, nil
}

// report prints, for each figure, the median over the rounds of the big
// store's value over the small one's, and each store's median.
func report(rounds [][2]storeRound) {
	figures := []struct {
		name string
		get  func(storeRound) time.Duration
	}{
		{"exec to serving", func(r storeRound) time.Duration { return r.Serving }},
		{"broker CPU exec to idle", func(r storeRound) time.Duration { return r.SettleCPU }},
		{"head pull p50", func(r storeRound) time.Duration { return r.Pull }},
		{"head pull p99", func(r storeRound) time.Duration { return r.PullP99 }},
		{"broker CPU per head pull", func(r storeRound) time.Duration { return r.PullCPU }},
		{"held pull p50", func(r storeRound) time.Duration { return r.Held }},
		{"held pull p99", func(r storeRound) time.Duration { return r.HeldP99 }},
		{"broker CPU per held pull", func(r storeRound) time.Duration { return r.HeldCPU }},
	}
	fmt.Printf("\nmedians over %d rounds (big / small):\n", len(rounds))
	for _, f := range figures {
		var big, small, ratio []float64
		for _, rr := range rounds {
			b, s := f.get(rr[0]).Seconds(), f.get(rr[1]).Seconds()
			big, small = append(big, b), append(small, s)
			if s > 0 {
				ratio = append(ratio, b/s)
			}
		}
		fmt.Printf("  %-26s big %9.1f us  small %9.1f us  ratio %.3fx\n", f.name, median(big)*1e6, median(small)*1e6, median(ratio))
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
