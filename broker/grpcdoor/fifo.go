package grpcdoor

import "github.com/runnelmq/runnel/groupconf"

// groupFIFO reports whether a consumer group consumes in order
// (consumeMessageOrderly): its clients get fifo in their Settings and one
// assignment per queue.
func groupFIFO(g groupconf.Config) bool { return g.ConsumeMessageOrderly }
