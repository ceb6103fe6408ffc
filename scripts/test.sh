#!/usr/bin/env bash
# The project's test command (README: `make test`). CI calls this.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== go vet"
go vet ./...

echo "== go test -race"
go test -race -count=1 -timeout 25m ./...

# The official RocketMQ Go client reports data races inside itself (its
# consumers' rebalance against their own pull paths). Tests that drive its
# consumers are built with `//go:build !race`, so they run here, without the
# race detector, where a race of theirs cannot fail CI for a reason not ours.
echo "== go test (official-client consumer tests, no race detector)"
go test -count=1 -timeout 15m ./integration/... ./client/...

echo "== fuzz (FUZZTIME=${FUZZTIME:-30000x} per target)"
./scripts/fuzz.sh
