#!/usr/bin/env bash
# Broker and client CPU per stored message: a fresh `runnel dev` in its own
# process, a 3,000-message warm-up, then one `runnelctl bench produce` of
# MSGS 1 KiB messages. Prints the broker's process CPU per message over the
# measured run (from /proc/PID/stat), runnelctl's (its start included) and
# the msg/s it reported. The rest of the arguments go to `bench produce`:
#
#   scripts/produce-cpu.sh RUNNEL RUNNELCTL [MSGS (100000)] [bench produce flags (--producers 16)]
#   scripts/produce-cpu.sh bin/runnel bin/runnelctl 100000 --producers 1 --senders 16
#
# --producers 16 is 16 connections with one send in flight on each;
# --producers 1 --senders 16 is one connection with 16 (an application's
# threads sharing one producer), whose sends the broker stores together.
# Alternate two builds to compare them (PORT, default 31876, moves the
# ports).
set -euo pipefail
. "$(dirname "$0")/cpu-lib.sh"
bin=$1 ctl=$2 msgs=${3:-100000}
shift $(($# < 3 ? $# : 3))
[ $# -gt 0 ] || set -- --producers 16
pb=${PORT:-31876}
ns=127.0.0.1:$pb br=127.0.0.1:$((pb + 1))
dir=$(mktemp -d) log=$(mktemp)
"$bin" dev --dir "$dir/store" --fresh --namesrv-listen "$ns" --broker-listen "$br" --metrics-listen "" --console-listen off >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true; rm -rf "$dir" "$log"' EXIT
for _ in $(seq 100); do "$ctl" -n "$ns" cluster list 2>/dev/null | grep -q "$br" && break; sleep 0.1; done
kill -0 $pid 2>/dev/null || { echo "produce-cpu: the broker did not start:" >&2; cat "$log" >&2; exit 1; }
"$ctl" -n "$ns" bench produce --topic cpu --msgs 3000 --size 1024 "$@" >/dev/null
measure "$pid" "$msgs" "$ctl" -n "$ns" bench produce --topic cpu --msgs "$msgs" --size 1024 "$@" -o json
