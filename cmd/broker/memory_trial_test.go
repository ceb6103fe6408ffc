package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestMemoryTrial puts the static broker binary under each of issue 36's
// loads, each in a fresh process: sampled RSS at its idle start, its peak
// under the load, and how long after the load it takes to come back within
// 1.5x of the idle start (the goal: peak <= 128 MiB, back within a
// minute). It measures and reports; it asserts only that the loads ran.
// Run it with a static build, as the images are:
//
//	CGO_ENABLED=0 RUNNEL_MEMORY_TRIAL=1 go test -run MemoryTrial -v -timeout 30m ./cmd/broker
//
// RUNNEL_MEMORY_TRIAL may name loads (comma-separated: producers,lagging,
// connections,batches); 1 runs them all.
func TestMemoryTrial(t *testing.T) {
	want := os.Getenv("RUNNEL_MEMORY_TRIAL")
	if want == "" {
		t.Skip("set RUNNEL_MEMORY_TRIAL=1 (or a list of loads) to measure (several minutes, GiBs written)")
	}
	bin := buildBinary(t)
	loads := []struct {
		name string
		run  func(t *testing.T, p *proc, stop <-chan struct{})
	}{
		{"producers", loadProducers},
		{"lagging", loadLagging},
		{"connections", loadConnections},
		{"batches", loadBatches},
	}
	for _, l := range loads {
		if want != "1" && !slices.Contains(strings.Split(want, ","), l.name) {
			continue
		}
		t.Run(l.name, func(t *testing.T) {
			args := []string{"--listen", "127.0.0.1:0", "--store-dir", t.TempDir(), "--log-level", "warn"}
			metrics := ""
			if os.Getenv("RUNNEL_MEMORY_DETAIL") != "" {
				metrics = freePort(t)
				args = append(args, "--metrics", metrics)
			}
			p := startProc(t, bin, args...)
			defer p.stop(t)
			time.Sleep(2 * time.Second)
			pid := p.cmd.Process.Pid
			detail := func(when string) {
				t.Logf("%s %s: %s", l.name, when, rssSplit(pid))
				if metrics != "" {
					t.Logf("%s %s: %s", l.name, when, goMemory(metrics))
				}
			}
			detail("idle start")
			start := rssKiB(t, pid)
			createTopic(t, func(req *protocol.Command) *protocol.Command { return call(t, p.addr, req) }, "M", 4)

			var peak atomic.Int64
			done := make(chan struct{})
			var sampler sync.WaitGroup
			sampler.Add(1)
			go func() {
				defer sampler.Done()
				tick := time.NewTicker(100 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-done:
						return
					case <-tick.C:
						if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
							if v := vmRSS(b); int64(v) > peak.Load() {
								peak.Store(int64(v))
							}
						}
					}
				}
			}()
			began := time.Now()
			l.run(t, p, done)
			loadTime := time.Since(began)
			close(done)
			sampler.Wait()
			end := rssKiB(t, pid)
			detail("at the load's end")

			goal := start * 3 / 2
			back, after := "not within 60 s", end
			for waited := time.Duration(0); waited <= time.Minute; waited += time.Second {
				after = rssKiB(t, pid)
				if after <= goal && back == "not within 60 s" {
					back = fmt.Sprintf("after %v", waited)
				}
				if waited < time.Minute {
					time.Sleep(time.Second)
				}
			}
			detail("60 s later")
			t.Logf("%s: idle start %.1f MiB; peak %.1f MiB during %v; %.1f MiB at its end; %.1f MiB 60 s later (%.2fx the start; within 1.5x %s)",
				l.name, mib(start), mib(int(peak.Load())), loadTime.Round(time.Second), mib(end), mib(after), float64(after)/float64(start), back)
		})
	}
}

func mib(kib int) float64 { return float64(kib) / 1024 }

// vmRSS is the VmRSS of a /proc/PID/status, in KiB (0 when absent).
func vmRSS(status []byte) int { return statusKiB(status, "VmRSS") }

// statusKiB is field key of a /proc/PID/status (a size in kB), 0 when
// absent.
func statusKiB(status []byte, key string) int {
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}

// trialSend sends req to addr on c, failing the test on an error or a
// code other than success.
func trialSend(t *testing.T, c *remoting.Client, addr string, req *protocol.Command) *protocol.Command {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := c.Invoke(ctx, addr, req)
	if err == nil && r.Code != protocol.RespSuccess {
		err = fmt.Errorf("code %d: %s", r.Code, r.Remark)
	}
	if err != nil {
		t.Error(err)
		return nil
	}
	return r
}

// senders runs n goroutines, each calling one(client, i) until it returns
// false or the test fails.
func senders(t *testing.T, n int, one func(c *remoting.Client, i int) bool) {
	var wg sync.WaitGroup
	for s := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := remoting.NewClient(remoting.DefaultClientConfig())
			defer c.Close()
			for i := 0; !t.Failed() && one(c, s*1_000_000+i); i++ {
			}
		}()
	}
	wg.Wait()
}

// loadProducers: 16 synchronous producers of 1 KiB messages for 30 s.
func loadProducers(t *testing.T, p *proc, _ <-chan struct{}) {
	body := make([]byte, 1024)
	until := time.Now().Add(30 * time.Second)
	senders(t, 16, func(c *remoting.Client, _ int) bool {
		hdr := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "M", DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 4, QueueID: -1, BornTimestamp: time.Now().UnixMilli()}.EncodeV2()
		trialSend(t, c, p.addr, protocol.NewRequest(protocol.ReqSendMessageV2, hdr, body))
		return time.Now().Before(until)
	})
}

// sendBatches sends total 1 KiB messages in batches of per from 4 senders,
// one queue each.
func sendBatches(t *testing.T, p *proc, total, per int) {
	body := batchBody(per, 1024)
	n := total / per / 4
	senders(t, 4, func(c *remoting.Client, i int) bool {
		q := int32(i / 1_000_000)
		hdr := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "M", DefaultTopic: "TBW102",
			DefaultTopicQueueNums: 4, QueueID: q, BornTimestamp: time.Now().UnixMilli(), Batch: true}.EncodeV2()
		trialSend(t, c, p.addr, protocol.NewRequest(protocol.ReqSendBatchMessage, hdr, body))
		return i%1_000_000+1 < n
	})
}

// loadLagging: 500,000 messages stored, then a consumer group reads them
// from the start (32 a pull, four queues in turn) while four producers go
// on adding 200,000.
func loadLagging(t *testing.T, p *proc, _ <-chan struct{}) {
	sendBatches(t, p, 500_000, 100)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sendBatches(t, p, 200_000, 100)
	}()
	c := remoting.NewClient(remoting.DefaultClientConfig())
	defer c.Close()
	var next [4]int64
	read := 0
	for read < 500_000 && !t.Failed() {
		for q := range int32(4) {
			hdr := protocol.PullMessageRequestHeader{ConsumerGroup: "lagging", Topic: "M", QueueID: q,
				QueueOffset: next[q], MaxMsgNums: 32, SysFlag: protocol.PullFlagSubscription, Subscription: "*"}.Encode()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			r, err := c.Invoke(ctx, p.addr, protocol.NewRequest(protocol.ReqPullMessage, hdr, nil))
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			switch r.Code {
			case protocol.RespSuccess:
			case protocol.RespPullNotFound, protocol.RespPullRetryImmediately:
				continue
			default:
				t.Fatalf("pull: code %d %s", r.Code, r.Remark)
			}
			n, err := strconv.ParseInt(r.ExtFields["nextBeginOffset"], 10, 64)
			if err != nil {
				t.Fatalf("pull answer without nextBeginOffset: %v", r.ExtFields)
			}
			read += int(n - next[q])
			next[q] = n
		}
	}
	wg.Wait()
}

// loadConnections: 5,000 connections, each having sent one heartbeat-sized
// request, held open for 10 s.
func loadConnections(t *testing.T, p *proc, _ <-chan struct{}) {
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	req := protocol.NewRequest(protocol.ReqGetBrokerRuntimeInfo, nil, nil)
	frame, err := protocol.AppendFrame(nil, req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for range 5000 {
		c, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := c.Write(frame); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Read(buf); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(10 * time.Second)
}

// loadBatches: four producers each sending 40 batches of 3,900 x 1 KiB
// (just under the 4 MiB limit).
func loadBatches(t *testing.T, p *proc, _ <-chan struct{}) {
	sendBatches(t, p, 4*40*3900, 3900)
}
