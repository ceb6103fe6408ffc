# Sourced by consume-cpu.sh and produce-cpu.sh: the one measurement both
# make.
#
#   measure PID MSGS RUNNELCTL ARGS... (a `runnelctl ... -o json` bench run)
#
# runs the command under /usr/bin/time and prints the process PID's CPU
# (utime+stime from /proc/PID/stat) per message over the run, the
# command's own (its start included), and the msg/s it reported.
measure() {
	local pid=$1 msgs=$2
	shift 2
	local c0 c1 out rate ctlcpu
	c0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
	out=$({ /usr/bin/time -f "CTLCPU %U %S" "$@"; } 2>&1)
	c1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
	rate=$(echo "$out" | grep -o '"msgsPerSec": *[0-9.]*' | head -1 | awk '{print int($2)}')
	ctlcpu=$(echo "$out" | awk '/CTLCPU/{print $2 + $3}')
	[ -n "$rate" ] || { echo "$out" >&2; return 1; }
	awk -v c0="$c0" -v c1="$c1" -v t="$(getconf CLK_TCK)" -v n="$msgs" -v cc="$ctlcpu" -v r="$rate" \
		'BEGIN { printf "broker %.2f us/msg  runnelctl %.2f us/msg  %s msg/s\n", (c1 - c0) / t / n * 1e6, cc / n * 1e6, r }'
}
