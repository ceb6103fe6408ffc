#!/usr/bin/env bash
# The project's test command (README: `make test`). CI calls this.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== go vet"
go vet ./...

# The race detector needs cgo and a C compiler. A machine with nothing but
# Go still runs every test, without it, and says so.
race=(-race)
if [[ "$(go env CGO_ENABLED)" != 1 ]] || ! command -v "$(go env CC)" >/dev/null 2>&1; then
	echo "WARNING: no C compiler for cgo: running the tests WITHOUT the race detector" >&2
	race=()
fi

echo "== go test ${race[*]:-}"
go test "${race[@]}" -count=1 -timeout 25m ./...

# The official RocketMQ Go client reports data races inside itself (its
# consumers' rebalance against their own pull paths). Tests that drive its
# consumers are built with `//go:build !race`, so they run here, without the
# race detector, where a race of theirs cannot fail CI for a reason not ours.
# (The store's model and crash tests also run here in full: under -race
# they run fewer seeds and kill cycles, being many times slower there.)
# Without the race detector the first pass already ran them.
if ((${#race[@]})); then
	# (bench/ is a module of its own, with its own tests: not this module's.)
	# Only the tests those files define run again: the rest of their
	# package ran in the first pass. A package whose !race files define no
	# test (the store's: a constant that lets its model and crash tests do
	# more without the race detector) runs whole.
	mapfile -t norace < <(grep -rl --include='*_test.go' --exclude-dir=bench '^//go:build !race' . | xargs -n1 dirname | sort -u)
	for pkg in "${norace[@]}"; do
		names=$(grep -l '^//go:build !race' "$pkg"/*_test.go | xargs sed -n 's/^func \(Test[A-Za-z0-9_]*\)(t \*testing\.T).*/\1/p' | paste -sd'|')
		echo "== go test (no race detector: the official clients' tests): $pkg${names:+ (${names//|/ })}"
		go test -count=1 -timeout 15m ${names:+-run "^(${names})\$"} "$pkg"
	done
fi

# bench/ (the side-by-side comparison with NATS JetStream) is a module of
# its own so that this one does not depend on nats-server; its go.sum must
# follow this module's dependencies, and only its own build and tests say
# when it does not.
echo "== bench/ module: vet and smoke tests"
(cd bench && go vet ./... && go test -count=1 -timeout 5m ./...)

echo "== README quick start against runnel dev"
./scripts/quickstart.sh

echo "== fuzz (FUZZTIME=${FUZZTIME:-30000x} per target)"
./scripts/fuzz.sh
