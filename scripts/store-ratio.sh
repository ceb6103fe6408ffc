#!/usr/bin/env bash
# Median throughput ratio of the store's append to raw Pebble writing the
# same bytes, from runs that alternate between the two so that both see the
# same machine load. For ASYNC_FLUSH the raw side has the store's kill-safe
# WAL (pebble-walfs); for SYNC_FLUSH it syncs every commit, as the store does.
#
#   scripts/store-ratio.sh [batch (1 or 64)] [pairs] [benchtime] [mode (ASYNC_FLUSH or SYNC_FLUSH)]
set -euo pipefail
cd "$(dirname "$0")/.."
batch=${1:-1} pairs=${2:-5} benchtime=${3:-2s} mode=${4:-ASYNC_FLUSH}
case $mode in
ASYNC_FLUSH) raw=pebble-walfs ;;
SYNC_FLUSH) raw=pebble ;;
*) echo "mode must be ASYNC_FLUSH or SYNC_FLUSH, not $mode" >&2; exit 2 ;;
esac
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
go test -c -o "$bin" ./store
nsop() { "$bin" -test.run '^$' -test.bench "^BenchmarkAppend\$/^$mode\$/^batch=$batch\$/^$1\$" -test.benchtime "$benchtime" | awk '/ns\/op/ {print $3}'; }
ratios=()
for _ in $(seq "$pairs"); do
	s=$(nsop store)
	r=$(nsop "$raw")
	ratio=$(awk -v s="$s" -v r="$r" 'BEGIN {printf "%.3f", r / s}')
	echo "$mode batch=$batch: store ${s} ns/op, raw Pebble ${r} ns/op: ${ratio}x"
	ratios+=("$ratio")
done
printf '%s\n' "${ratios[@]}" | sort -n | awk -v m="$mode" -v b="$batch" '{v[NR] = $1} END {x = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%s batch=%s: median %.3fx over %d pairs\n", m, b, x, NR}'
