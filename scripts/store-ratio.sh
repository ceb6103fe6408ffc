#!/usr/bin/env bash
# Median throughput ratio of the store's append to raw Pebble with the same
# kill-safe WAL (ASYNC_FLUSH), from runs that alternate between the two so
# that both see the same machine load.
#
#   scripts/store-ratio.sh [batch (1 or 64)] [pairs] [benchtime]
set -euo pipefail
cd "$(dirname "$0")/.."
batch=${1:-1} pairs=${2:-5} benchtime=${3:-2s}
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
go test -c -o "$bin" ./store
nsop() { "$bin" -test.run '^$' -test.bench "Append\$/ASYNC_FLUSH/batch=$batch/$1\$" -test.benchtime "$benchtime" | awk '/ns\/op/ {print $3}'; }
ratios=()
for _ in $(seq "$pairs"); do
	store=$(nsop store)
	raw=$(nsop pebble-walfs)
	ratio=$(awk -v s="$store" -v r="$raw" 'BEGIN {printf "%.3f", r / s}')
	echo "store ${store} ns/op, raw Pebble ${raw} ns/op: ${ratio}x"
	ratios+=("$ratio")
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "median %.3fx over %d pairs\n", m, NR}'
