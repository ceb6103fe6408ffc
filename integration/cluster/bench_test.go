package cluster_test

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/runnelmq/runnel/integration/cluster"
)

// BenchmarkStart measures what a user's test pays for a cluster: Start (a
// name server and the brokers on fresh stores, each broker registered)
// and the cleanup that closes them and removes their stores.
func BenchmarkStart(b *testing.B) {
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("brokers=%d", n), func(b *testing.B) {
			for b.Loop() {
				t := &iterationTB{TB: b}
				cluster.Start(t, cluster.Brokers(n))
				t.cleanup()
			}
		})
	}
}

// BenchmarkRestartBroker measures RestartBroker: a clean stop, then a
// start on the same store and address, registered again.
func BenchmarkRestartBroker(b *testing.B) {
	c := cluster.Start(b)
	for b.Loop() {
		c.RestartBroker(0)
	}
}

// iterationTB gives one benchmark iteration its own cleanups and temporary
// directories, so that Start's cleanup runs (and is timed) inside the
// iteration that started the cluster instead of piling up until the
// benchmark ends. Everything else goes to the benchmark.
type iterationTB struct {
	testing.TB
	cleanups []func()
}

func (t *iterationTB) Cleanup(f func()) { t.cleanups = append(t.cleanups, f) }

func (t *iterationTB) TempDir() string {
	dir, err := os.MkdirTemp("", "runnel-cluster-bench-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Error(err)
		}
	})
	return dir
}

// cleanup runs the cleanups last-in first-out, as testing does.
func (t *iterationTB) cleanup() {
	for _, f := range slices.Backward(t.cleanups) {
		f()
	}
	t.cleanups = nil
}
