#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a short time each.
#
#   scripts/fuzz.sh                  # all packages, FUZZTIME (default 30000x: executions per target) per target
#   FUZZTIME=1m scripts/fuzz.sh ./remoting/protocol
#
# Targets are discovered per package with `go test -list '^Fuzz'`, so new
# targets (and other packages' targets) are picked up without editing this
# file. Seeds come from each package's testdata/fuzz/<Target>/; inputs the
# fuzzer finds interesting stay in the Go build cache, and a failing input is
# written to testdata/fuzz/<Target>/ by `go test` itself, to be checked in
# with the fix. FUZZPARALLEL limits the fuzzing workers (default: GOMAXPROCS).
set -euo pipefail

cd "$(dirname "$0")/.."

# A count of executions by default, not a duration: with a duration, a
# worker still busy when the time is up makes `go test` fail with "context
# deadline exceeded" on a loaded machine (a flake of the fuzzing
# coordinator, not of the code under test).
fuzztime="${FUZZTIME:-30000x}"
# A bare number means seconds.
if [[ "$fuzztime" =~ ^[0-9]+$ ]]; then
	fuzztime="${fuzztime}s"
fi
parallel=()
if [[ -n "${FUZZPARALLEL:-}" ]]; then
	parallel=(-parallel "$FUZZPARALLEL")
fi

pkgs=("$@")
if [[ ${#pkgs[@]} -eq 0 ]]; then
	pkgs=(./...)
fi

count=0
for pkg in $(go list "${pkgs[@]}"); do
	targets=$(go test -list '^Fuzz' "$pkg" | grep -E '^Fuzz[A-Za-z0-9_]*$' || true)
	for target in $targets; do
		echo "fuzz: $pkg $target for $fuzztime"
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "${parallel[@]}" "$pkg"
		count=$((count + 1))
	done
done
echo "fuzz: $count targets passed"
