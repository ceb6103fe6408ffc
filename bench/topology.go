package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
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

// proc is a server running in a process of its own.
type proc struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once it has exited
	err    error         // its exit, set before exited closes
	tail   *lineTail
}

// startProc runs bin with args and waits until every one of want has
// matched a line of its output (stdout and stderr alike), returning each
// pattern's first submatch in order: the addresses a server says it serves
// on. A process that exits or takes longer than 30 s first is an error
// with the end of its output.
func startProc(ctx context.Context, bin string, args []string, want ...*regexp.Regexp) (*proc, []string, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	p := &proc{cmd: exec.Command(bin, args...), exited: make(chan struct{}), tail: &lineTail{}}
	p.cmd.Stdout, p.cmd.Stderr = pw, pw
	err = p.cmd.Start()
	_ = pw.Close()
	if err != nil {
		_ = pr.Close()
		return nil, nil, err
	}
	found := make([]string, len(want))
	ready := make(chan struct{})
	go func() {
		defer pr.Close()
		sc := bufio.NewScanner(pr)
		left := len(want)
		for sc.Scan() {
			line := sc.Text()
			p.tail.add(line)
			for i, re := range want {
				if m := re.FindStringSubmatch(line); found[i] == "" && m != nil {
					found[i] = m[1]
					if left--; left == 0 {
						close(ready)
					}
				}
			}
		}
		// Keep reading to the end so that a chatty server never blocks on
		// a full pipe.
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	select {
	case <-ready:
		return p, found, nil
	case <-p.exited:
		err = fmt.Errorf("exited before serving: %v", p.err)
	case <-timeout.C:
		err = errors.New("not serving after 30s")
	case <-ctx.Done():
		err = ctx.Err()
	}
	p.stop()
	return nil, nil, fmt.Errorf("%s: %w; its output ends:\n%s", filepath.Base(bin), err, p.tail)
}

// cpu is the user and system CPU the process has used so far (0 once it
// is gone).
func (p *proc) cpu() time.Duration {
	d, _ := procCPU(p.cmd.Process.Pid)
	return d
}

// stop ends the process as an operator would (SIGTERM: a clean shutdown),
// killing it if it is still there after 20 s.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// lineTail keeps the last lines of a process's output for its errors.
type lineTail struct {
	mu    sync.Mutex
	lines []string
}

func (t *lineTail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lines = append(t.lines, line); len(t.lines) > 20 {
		t.lines = t.lines[1:]
	}
}

func (t *lineTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

// procCPU reads the user and system CPU of process pid from
// /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	ticks, err := statTicks(string(b))
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return time.Duration(ticks) * time.Second / time.Duration(clockTicks()), nil
}

// statTicks is utime+stime, fields 14 and 15 of a /proc/PID/stat line, in
// clock ticks. The command name, field 2, is in parentheses and may hold
// spaces and parentheses: the fields are counted from the last ')'.
func statTicks(stat string) (int64, error) {
	var f []string
	if i := strings.LastIndexByte(stat, ')'); i >= 0 {
		f = strings.Fields(stat[i+1:])
	}
	if len(f) < 13 {
		return 0, fmt.Errorf("not a stat line: %q", stat)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return utime + stime, nil
}

// clockTicks is the kernel's clock ticks per second (getconf CLK_TCK;
// 100 on Linux, where getconf is missing).
var clockTicks = sync.OnceValue(func() int64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 100
})
