package main

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/internal/promtest"
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
	for _, k := range []string{"RssAnon", "RssFile", "RssShmem"} {
		out = append(out, fmt.Sprintf("%s %.1f", k, mib(statusKiB(b, k))))
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
	fams, err := promtest.Scrape("http://" + addr + "/metrics")
	if err != nil {
		return err.Error()
	}
	m := map[string]float64{}
	for name, fam := range fams {
		if !strings.HasPrefix(name, "go_") || len(fam.GetMetric()) != 1 {
			continue
		}
		if v, ok := promtest.Value(fam.GetMetric()[0]); ok {
			m[strings.TrimPrefix(name, "go_memstats_")] = v / (1 << 20)
		}
	}
	return fmt.Sprintf("sys %.1f: heap in use %.1f (objects %.1f), free unreturned %.1f, stacks %.1f, GC metadata %.1f, mspan %.1f, mcache %.2f, buckhash %.1f, other %.1f MiB; goroutines %.0f",
		m["sys_bytes"], m["heap_inuse_bytes"], m["heap_alloc_bytes"], m["heap_idle_bytes"]-m["heap_released_bytes"], m["stack_inuse_bytes"],
		m["gc_sys_bytes"], m["mspan_inuse_bytes"], m["mcache_inuse_bytes"], m["buck_hash_sys_bytes"], m["other_sys_bytes"],
		m["go_goroutines"]*(1<<20))
}
