package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
)

// What a broker process's RSS is made of, for TestMemoryTrial's log: the
// kernel's split (anonymous memory, file pages such as the binary's text
// touched, shared memory) and, when the broker serves metrics, the Go
// runtime's own account of the memory it holds from the system.

// rssSplit is /proc/PID/status's RssAnon, RssFile and RssShmem in MiB.
func rssSplit(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		for _, k := range []string{"RssAnon:", "RssFile:", "RssShmem:"} {
			if v, ok := strings.CutPrefix(line, k); ok {
				n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
				out = append(out, fmt.Sprintf("%s %.1f", strings.TrimSuffix(k, ":"), mib(n)))
			}
		}
	}
	return strings.Join(out, ", ") + " MiB"
}

// freePort is a loopback address free a moment ago, for the metrics
// listener.
func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// goMemory is the runtime's memory figures from a Prometheus endpoint's
// go_memstats_* gauges, in MiB: heap in use (spans) and the objects in it, heap free but not returned,
// stacks, the collector's metadata, span and cache structures, and the
// rest of what the runtime holds.
func goMemory(addr string) string {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	m := map[string]float64{}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 4<<20))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(name, "go_") {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err == nil {
			m[strings.TrimPrefix(name, "go_memstats_")] = f / (1 << 20)
		}
	}
	return fmt.Sprintf("sys %.1f: heap in use %.1f (objects %.1f), free unreturned %.1f, stacks %.1f, GC metadata %.1f, mspan %.1f, mcache %.2f, buckhash %.1f, other %.1f MiB; goroutines %.0f",
		m["sys_bytes"], m["heap_inuse_bytes"], m["heap_alloc_bytes"], m["heap_idle_bytes"]-m["heap_released_bytes"], m["stack_inuse_bytes"],
		m["gc_sys_bytes"], m["mspan_inuse_bytes"], m["mcache_inuse_bytes"], m["buck_hash_sys_bytes"], m["other_sys_bytes"],
		m["go_goroutines"]*(1<<20))
}
