// Command bigstore measures what a big store costs the broker (issue #39,
// "a big store"): a pull at the head of a queue and a held pull's answer,
// with many messages stored against the same with few, in latency and
// broker CPU per pull, and the broker's restart on each store, from exec
// to its serving line.
//
//	bigstore build -dir D -msgs N          build a store of N messages once
//	bigstore measure -bin BROKER -big D1 -small D2 [-rounds R]
//
// build writes straight through the store package's append path (Put, in
// large batches), into the directory layout the broker opens as its
// --store-dir, and says how long it took and how much disk it used. measure
// runs the real broker binary (cmd/broker) on each store in turn, round
// after round, alternating them so that the machine's changing load falls
// on both alike: each round restarts the broker (timing exec to serving),
// then times head pulls and held pulls over the wire, reading the broker's
// CPU from /proc/PID/stat, and prints the big store's medians as ratios to
// the small one's. scripts/bigstore.sh builds both stores and measures.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = runBuild(os.Args[2:])
	case "measure":
		err = runMeasure(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: bigstore build -dir D -msgs N | bigstore measure -bin BROKER -big D1 -small D2")
	os.Exit(2)
}

func runBuild(args []string) error {
	fs := flag.NewFlagSet("build", flag.ExitOnError)
	spec := buildSpec{}
	fs.StringVar(&spec.Dir, "dir", "", "the new store's directory (must be empty or missing)")
	fs.Int64Var(&spec.Msgs, "msgs", 1000, "messages to store")
	fs.IntVar(&spec.Size, "size", 16, "body size in bytes")
	fs.IntVar(&spec.Batch, "batch", 4096, "messages per Put")
	fs.StringVar(&spec.Topic, "topic", defaultTopic, "the topic (one queue) to store them in")
	_ = fs.Parse(args)
	if spec.Dir == "" {
		return fmt.Errorf("bigstore build: -dir is required")
	}
	res, err := build(spec, os.Stderr)
	if err != nil {
		return err
	}
	fmt.Printf("built %d messages of %d bytes in %s: %v (%.0f msg/s), %.2f GiB on disk (%.1f bytes/msg)\n",
		spec.Msgs, spec.Size, spec.Dir, res.Took.Round(time.Millisecond), float64(spec.Msgs)/res.Took.Seconds(),
		float64(res.DiskBytes)/(1<<30), float64(res.DiskBytes)/float64(spec.Msgs))
	return nil
}

// defaultTopic is the topic build stores into and measure pulls from.
const defaultTopic = "BigStore"
