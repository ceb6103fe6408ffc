package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// topology says where the brokers run. The zero value runs them in this
// process beside their clients ("inprocess"); with binaries, each run
// starts its broker as a process of its own on loopback ("process"), as
// users run it, and its CPU is read from /proc. The clients always run in
// this process.
type topology struct {
	// RunnelBin is a `runnel` binary (cmd/runnel: `runnel dev`, a name
	// server and a broker in one process, what produce-cpu.sh and
	// consume-cpu.sh measure); NATSBin a nats-server. Both empty: in
	// process.
	RunnelBin, NATSBin string
	// NamesrvBin and BrokerBin (cmd/namesrv, cmd/broker) run a
	// replicated group: a name server and a broker process per node.
	NamesrvBin, BrokerBin string
}

const (
	topologyInProcess = "inprocess"
	topologyProcess   = "process"
)

func (t topology) process() bool { return t.RunnelBin != "" }

func (t topology) String() string {
	if t.process() {
		return topologyProcess
	}
	return topologyInProcess
}

// buildBinaries builds the process topology's binaries into dir: runnel,
// namesrv and broker from the main module (the module bench's replace
// directive names, so the binaries are the ones a user builds from this
// checkout) and nats-server at the version this module requires. It runs
// the go command in the working directory, which must be bench/.
func buildBinaries(ctx context.Context, dir string) (topology, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/runnelmq/runnel").Output()
	if err != nil {
		return topology{}, fmt.Errorf("find the runnel module (run from bench/, or give -runnel-bin and -nats-bin): %w", err)
	}
	t := topology{RunnelBin: filepath.Join(dir, "runnel"), NATSBin: filepath.Join(dir, "nats-server"),
		NamesrvBin: filepath.Join(dir, "namesrv"), BrokerBin: filepath.Join(dir, "broker")}
	mainDir := strings.TrimSpace(string(out))
	for _, b := range []struct{ dir, bin, pkg string }{
		{mainDir, t.RunnelBin, "./cmd/runnel"},
		{mainDir, t.NamesrvBin, "./cmd/namesrv"},
		{mainDir, t.BrokerBin, "./cmd/broker"},
		{"", t.NATSBin, "github.com/nats-io/nats-server/v2"},
	} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", b.bin, b.pkg)
		cmd.Dir = b.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return topology{}, fmt.Errorf("go build %s: %w\n%s", b.pkg, err, out)
		}
	}
	return t, nil
}

// cpuSource reads a CPU total; nil where the broker shares this process,
// so that there is no CPU of its own to read.
type cpuSource func() time.Duration
