#!/usr/bin/env bash
# Broker and client CPU per delivered message: `runnel dev` in its own
# process, one `runnelctl bench consume` (one push consumer) draining MSGS
# messages already stored in its directory with a new group. Prints the
# broker's process CPU per message over the consume run (from
# /proc/PID/stat), runnelctl's (its start included) and the msg/s it
# reported. Fill the directory first, e.g.:
#
#   runnel dev --dir D --namesrv-listen 127.0.0.1:31876 --broker-listen 127.0.0.1:31877 &
#   runnelctl -n 127.0.0.1:31876 bench produce --msgs 100000 --size 1024 --producers 16 --batch 32
#
#   scripts/consume-cpu.sh DIR RUNNEL RUNNELCTL [MSGS (100000)] [PORT (31876)]
#
# Alternate two builds (each on a directory it filled) to compare them.
set -euo pipefail
. "$(dirname "$0")/cpu-lib.sh"
dir=$1 bin=$2 ctl=$3 msgs=${4:-100000} pb=${5:-31876}
ns=127.0.0.1:$pb br=127.0.0.1:$((pb + 1))
log=$(mktemp)
"$bin" dev --dir "$dir" --namesrv-listen "$ns" --broker-listen "$br" --metrics-listen "" --console-listen off >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 100); do "$ctl" -n "$ns" topic route runnelctl-bench >/dev/null 2>&1 && break; sleep 0.1; done
sleep 1
kill -0 $pid 2>/dev/null || { echo "consume-cpu: the broker did not start:" >&2; cat "$log" >&2; exit 1; }
measure "$pid" "$msgs" "$ctl" -n "$ns" bench consume --msgs "$msgs" --group "cpu_$RANDOM$RANDOM" -o json
