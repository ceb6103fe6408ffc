package core

import (
	"fmt"
	"testing"
	"time"
)

// fillQueue stores n messages in topic's queue 0, in batches.
func fillQueue(b *testing.B, c *testCore, topic string, n int) {
	b.Helper()
	for sent := 0; sent < n; {
		batch := make([]SendMessage, 0, 256)
		for ; len(batch) < cap(batch) && sent < n; sent++ {
			batch = append(batch, SendMessage{Body: []byte(fmt.Sprint("body-", sent))})
		}
		if _, err := c.Send(SendRequest{Topic: topic, QueueID: 0, MaxReconsumeTimes: -1, Batch: true, Messages: batch, Client: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPopAck measures a plain pop of 32 messages and the batch ack
// of them (two store ops): per message, what a POP consumer costs the
// core beyond reading.
func BenchmarkPopAck(b *testing.B) {
	for _, fifo := range []bool{false, true} {
		b.Run(fmt.Sprint("fifo=", fifo), func(b *testing.B) {
			c := openCore(b, nil)
			if fifo {
				g, _ := c.GroupConfig("g")
				g.ConsumeMessageOrderly = true
				if err := c.UpdateGroup(g, "bench"); err != nil {
					b.Fatal(err)
				}
			}
			fillQueue(b, c, "T", b.N*32)
			r := PopRequest{Group: "g", Topic: "T", QueueID: 0, MaxMessages: 32, InvisibleTime: time.Minute}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				res, _, err := c.Pop(r, nil)
				if err != nil || len(res.Messages) != 32 {
					b.Fatalf("pop: %d messages, %v", len(res.Messages), err)
				}
				acks := make([]AckEntry, len(res.Messages))
				for i, p := range res.Messages {
					acks[i] = AckEntry{Group: "g", Topic: "T", Handle: p.Handle}
				}
				for _, err := range c.BatchAck(acks) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*32), "ns/msg")
		})
	}
}

// BenchmarkAckOne measures acknowledging one message at a time (a gRPC
// AckMessage of one entry).
func BenchmarkAckOne(b *testing.B) {
	c := openCore(b, nil)
	fillQueue(b, c, "T", b.N)
	var handles []string
	for len(handles) < b.N {
		res, _, err := c.Pop(PopRequest{Group: "g", Topic: "T", QueueID: 0, MaxMessages: 32, InvisibleTime: time.Hour}, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range res.Messages {
			handles = append(handles, p.Handle)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := c.Ack("g", "T", handles[i]); err != nil {
			b.Fatal(err)
		}
	}
}
