#!/usr/bin/env bash
# A big store against a small one (issue #39, "a big store"): builds the
# broker and bench/bigstore, builds a store of BIG messages (once: an
# existing directory is reused as it is) and one of SMALL (anew each run:
# the held pulls' sends add -holds, 500, a round to both), then runs
# the real broker on each in turn, ROUNDS rounds, timing its restart (exec
# to serving), head pulls and held pulls, with the broker's CPU per pull,
# and prints the big store's medians as ratios to the small one's.
#
#   scripts/bigstore.sh [BIG (10000000)] [SMALL (1000)] [ROUNDS (5)] [DIR ($TMPDIR)]
#
# The stores are left in DIR/bigstore-BIG and DIR/bigstore-SMALL; the big
# one is reused by the next run. Remove them when done: 100 million
# messages of 16 bytes take 4.3 GiB, and 25 minutes to build on 2 shared
# cores under load. Extra flags for `bigstore measure` (e.g. -pulls 50000)
# go in MEASURE_FLAGS.
set -euo pipefail
cd "$(dirname "$0")/.."
big=${1:-10000000} small=${2:-1000} rounds=${3:-5} dir=${4:-${TMPDIR:-/tmp}}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/broker" ./cmd/broker
(cd bench && go build -o "$bin/bigstore" ./bigstore)
if [[ -d $dir/bigstore-$big ]]; then
	echo "reusing $dir/bigstore-$big"
else
	nice "$bin/bigstore" build -dir "$dir/bigstore-$big" -msgs "$big"
fi
rm -rf "$dir/bigstore-$small"
"$bin/bigstore" build -dir "$dir/bigstore-$small" -msgs "$small"
# shellcheck disable=SC2086 # MEASURE_FLAGS is a list of flags
"$bin/bigstore" measure -bin "$bin/broker" -big "$dir/bigstore-$big" -small "$dir/bigstore-$small" -rounds "$rounds" ${MEASURE_FLAGS:-}
