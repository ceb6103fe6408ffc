#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a short time each.
#
#   scripts/fuzz.sh                  # all packages, FUZZTIME (default 30000x: executions per target) per target
#   FUZZTIME=1m scripts/fuzz.sh ./remoting/protocol
#
# Targets are found in each package's test files, so new targets (and
# other packages' targets) are picked up without editing this file. Seeds
# come from each package's testdata/fuzz/<Target>/; inputs the fuzzer finds
# interesting stay in the Go build cache, and a failing input is
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

# Targets are read from each package's test files (func FuzzXxx(name
# *testing.F) at the start of a line, as gofmt writes it), not with
# `go test -list`, which links every package's test binary only to list
# it: minutes over the module's ~80 packages, for 25 targets.
count=0
while read -r dir pkg; do
	targets=$(cat "$dir"/*_test.go 2>/dev/null | sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)([A-Za-z_][A-Za-z0-9_]* \*testing\.F).*/\1/p' || true)
	for target in $targets; do
		echo "fuzz: $pkg $target for $fuzztime"
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "${parallel[@]}" "$pkg"
		count=$((count + 1))
	done
done < <(go list -f '{{.Dir}} {{.ImportPath}}' "${pkgs[@]}")
echo "fuzz: $count targets passed"
