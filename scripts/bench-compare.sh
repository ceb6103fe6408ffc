#!/usr/bin/env bash
# Side-by-side throughput of Runnel with its own client, NATS JetStream
# (embedded, file store) and Runnel with the official RocketMQ Go client, on
# the same workload: 1 KiB bodies, 16 goroutines each sending synchronously,
# N messages, then one consumer draining them. The systems alternate, round
# after round (K rounds), so that the machine's load falls on each alike; the
# summary gives median msg/s and the median ratios to NATS in the same round.
# The comparison is its own module (bench/), so the main module does not
# depend on nats-server.
#
# Runnel runs in this process beside its clients, as NATS does, on the
# standard library's transport (a broker in its own process serves with
# netpoll; docs/performance.md, session 17, measures both): a Runnel system
# may name its transport (runnel@netpoll), and -transport sets the default.
#
# Two more Runnel rows measure #18's goals that are ratios to plain Runnel:
# runnel-batch (sends of -batch messages, default 32) and runnel-topics
# (sends spread over -topics topics, default 1000; produce only).
#
#   scripts/bench-compare.sh [N (default 100000)] [K (default 3)] [extra flags of bench/, e.g. -systems runnel,nats]
#   scripts/bench-compare.sh 100000 5 -systems runnel,runnel-batch,runnel-topics,nats,official -topics 10000
set -euo pipefail
cd "$(dirname "$0")/../bench"
msgs=${1:-100000} runs=${2:-3}
shift $(($# < 2 ? $# : 2))
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
go build -o "$bin" .
"$bin" -msgs "$msgs" -runs "$runs" "$@"
