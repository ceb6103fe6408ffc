#!/usr/bin/env bash
# A big store against a small one (issue #39, "a big store"): builds the
# broker and bench/bigstore, builds a store of BIG messages and one of
# SMALL (each once: an existing directory is reused as it is), then runs
# the real broker on each in turn, ROUNDS rounds, timing its restart (exec
# to serving), head pulls and held pulls, with the broker's CPU per pull,
# and prints the big store's medians as ratios to the small one's.
#
#   scripts/bigstore.sh [BIG (10000000)] [SMALL (1000)] [ROUNDS (5)] [DIR ($TMPDIR)]
#
# The stores are left in DIR/bigstore-BIG and DIR/bigstore-SMALL for the
# next run; remove them when done (100 million messages of 16 bytes take
# about 5 GiB and, on 2 shared cores, an hour to build). Extra flags for
# `bigstore measure` (e.g. -pulls 50000) go in MEASURE_FLAGS.
set -euo pipefail
cd "$(dirname "$0")/.."
big=${1:-10000000} small=${2:-1000} rounds=${3:-5} dir=${4:-${TMPDIR:-/tmp}}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/broker" ./cmd/broker
(cd bench && go build -o "$bin/bigstore" ./bigstore)
for n in "$big" "$small"; do
	d=$dir/bigstore-$n
	if [[ -d $d ]]; then
		echo "reusing $d"
	else
		nice "$bin/bigstore" build -dir "$d" -msgs "$n"
	fi
done
# shellcheck disable=SC2086 # MEASURE_FLAGS is a list of flags
"$bin/bigstore" measure -bin "$bin/broker" -big "$dir/bigstore-$big" -small "$dir/bigstore-$small" -rounds "$rounds" ${MEASURE_FLAGS:-}
