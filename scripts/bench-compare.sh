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
#   scripts/bench-compare.sh [N (default 100000)] [K (default 3)] [extra flags of bench/, e.g. -systems runnel,nats]
set -euo pipefail
cd "$(dirname "$0")/../bench"
msgs=${1:-100000} runs=${2:-3}
shift $(($# < 2 ? $# : 2))
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
go build -o "$bin" .
"$bin" -msgs "$msgs" -runs "$runs" "$@"
