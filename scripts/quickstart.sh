#!/usr/bin/env bash
# Runs the README's quick start, as written, against a `runnel dev` of its
# own, and fails if any command does. The commands are the lines starting
# with "bin/" between the README's <!-- quickstart --> markers; `bin/runnel
# dev` is started here instead (free ports, a temporary store), and
# NAMESRV_ADDR points the CLIs at it. Binaries are built into a temporary
# directory, so a checkout's bin/ is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

tmp=$(mktemp -d)
dev_pid=
cleanup() {
	if [[ -n "$dev_pid" ]]; then
		kill -INT "$dev_pid" 2>/dev/null || true
		wait "$dev_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

mapfile -t cmds < <(awk '/<!-- quickstart -->/{on=1; next} /<!-- \/quickstart -->/{on=0} on && /^bin\//' README.md |
	sed -e 's/[[:space:]]*#.*$//' -e 's/[[:space:]]*&$//')
if ((${#cmds[@]} < 3)); then
	echo "quickstart: found ${#cmds[@]} commands between the README's quickstart markers" >&2
	exit 1
fi

go build -o "$tmp/bin/" ./cmd/runnel ./cmd/runnelctl ./cmd/consumer

# Port 0: the kernel picks free ports; dev prints the name server's.
"$tmp/bin/runnel" dev --dir "$tmp/store" --namesrv-listen 127.0.0.1:0 --broker-listen 127.0.0.1:0 --grpc-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 --console-listen 127.0.0.1:0 >"$tmp/dev.out" 2>&1 &
dev_pid=$!
for _ in $(seq 1 200); do
	grep -q "broker: serving on" "$tmp/dev.out" && break
	if ! kill -0 "$dev_pid" 2>/dev/null; then
		cat "$tmp/dev.out" >&2
		exit 1
	fi
	sleep 0.05
done
grep -q "broker: serving on" "$tmp/dev.out" || { echo "quickstart: runnel dev did not start" >&2; cat "$tmp/dev.out" >&2; exit 1; }
NAMESRV_ADDR=$(sed -n 's/^namesrv: serving on //p' "$tmp/dev.out")
export NAMESRV_ADDR

for c in "${cmds[@]}"; do
	[[ "$c" == "bin/runnel dev"* ]] && continue
	echo "\$ $c"
	# The README's commands are simple words and quoted strings.
	if ! (cd "$tmp" && timeout 60 bash -c "$c" </dev/null); then
		echo "quickstart: failed: $c" >&2
		exit 1
	fi
done
echo "quickstart: all ${#cmds[@]} commands of the README's quick start passed"

# The README's test-harness example (the Go block after its <!-- harness -->
# marker, a whole test file), compiled and run as a test of a package of its
# own (a directory starting with _ is outside ./...).
snippet_dir=$(mktemp -d ./integration/_readme.XXXXXX)
trap 'rm -rf "$snippet_dir"; cleanup' EXIT
awk '/<!-- harness -->/{on=1} on && /^```go/{code=1; next} code && /^```/{exit} code' README.md >"$snippet_dir/readme_test.go"
if ! grep -q '^func Test' "$snippet_dir/readme_test.go"; then
	echo "quickstart: no Go test in the README's harness snippet" >&2
	exit 1
fi
go test -count=1 "./${snippet_dir#./}"
echo "quickstart: the README's harness snippet passed"
