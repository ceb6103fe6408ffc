#!/usr/bin/env bash
# The project's test command (README: `make test`). CI calls this.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== go vet"
go vet ./...

echo "== go test -race"
go test -race -count=1 -timeout 20m ./...

echo "== fuzz (FUZZTIME=${FUZZTIME:-10s} per target)"
./scripts/fuzz.sh
