// Command runnelctl administers a Runnel (or Apache RocketMQ) cluster:
// clusters and brokers, topics, sending messages, consumer groups and their
// offsets, and message lookups. See `runnelctl --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
