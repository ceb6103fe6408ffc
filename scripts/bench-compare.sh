#!/usr/bin/env bash
# Side-by-side throughput and CPU of Runnel with its own client, NATS
# JetStream (file store), Runnel with the official RocketMQ Go client
# (`official`) and Runnel with the RocketMQ 5 Go SDK through its gRPC door
# (`v5`, plaintext; a push consumer drains), on the same workload: 1 KiB
# bodies, 16 goroutines each sending synchronously, N messages, then one
# consumer draining them. The systems alternate, round after round (K
# rounds), so that the machine's load falls on each alike; the summary
# gives median msg/s and the median ratios to NATS and to plain Runnel in
# the same round. The comparison is its own module (bench/), so the main
# module does not depend on nats-server.
#
# Two topologies (-topology):
#
# - inprocess (the default): each broker runs in the bench's process
#   beside its clients, on the standard library's transport (a broker in
#   its own process serves with netpoll; docs/performance.md, session 17,
#   measures both): a Runnel system may name its transport
#   (runnel@netpoll), and -transport sets the default. CPU is the whole
#   process's.
# - process: each broker runs in a process of its own on loopback, as
#   users run it: `runnel dev` (built from this checkout; netpoll) and
#   nats-server (built at the version bench/go.mod requires, JetStream on
#   its file store); the clients stay in the bench's process. The summary
#   gives the broker process's CPU per message (from /proc/PID/stat), for
#   produce, consume and both, and its ratio to plain runnel's ("broker vs
#   runnel": issue 39's official-client goal, issue 34's v5 goal), then the
#   clients' CPU. -runnel-bin and -nats-bin run binaries already built.
#   A v5 run's end waits out the SDK's held receives (~24 s, not measured).
#
# Two more Runnel rows measure #18's goals that are ratios to plain Runnel:
# runnel-batch (sends of -batch messages, default 32) and runnel-topics
# (sends spread over -topics topics, default 1000; produce only). A third,
# runnel-raft3, is a replicated group of three brokers (issue 39: produce
# and consume as ratios to plain runnel, "vs runnel"): in process over
# raft's in-memory transport; with -topology process, a name server and
# three broker processes from DLedger-style broker.conf files, raft over
# loopback TCP, the broker CPU theirs together.
#
#   scripts/bench-compare.sh [N (default 100000)] [K (default 3)] [extra flags of bench/, e.g. -systems runnel,nats]
#   scripts/bench-compare.sh 100000 5 -systems runnel,runnel-batch,runnel-topics,nats,official -topics 10000
#   scripts/bench-compare.sh 100000 3 -topology process -systems runnel,nats,official,v5
#   scripts/bench-compare.sh 50000 3 -topology process -systems runnel,runnel-raft3
#
# -rate R caps every system's sends at R msg/s in all, so that brokers
# whose clients differ in speed carry the same load: a broker's CPU per
# message falls as its load rises (more requests share each wake-up, store
# write and answer write), so at different rates the ratio is partly the
# clients' speed.
#
#   scripts/bench-compare.sh 100000 3 -topology process -systems runnel,official -rate 4000
set -euo pipefail
cd "$(dirname "$0")/../bench"
msgs=${1:-100000} runs=${2:-3}
shift $(($# < 2 ? $# : 2))
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
go build -o "$bin" .
"$bin" -msgs "$msgs" -runs "$runs" "$@"
