// Package proc runs a server in a process of its own for the benchmarks:
// it starts it, waits for the lines that say it serves (timing exec to
// the last of them), reads its CPU from /proc and stops it as an operator
// would.
package proc

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

// Proc is a server running in a process of its own.
type Proc struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once it has exited
	err    error         // its exit, set before exited closes
	tail   *lineTail
	// Serving is the time from exec to the last wanted line.
	Serving time.Duration
}

// Start runs bin with args and waits until every one of want has
// matched a line of its output (stdout and stderr alike), returning each
// pattern's first submatch in order: the addresses a server says it serves
// on. A process that exits or takes longer than 30 s first is an error
// with the end of its output.
func Start(ctx context.Context, bin string, args []string, want ...*regexp.Regexp) (*Proc, []string, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	p := &Proc{cmd: exec.Command(bin, args...), exited: make(chan struct{}), tail: &lineTail{}}
	p.cmd.Stdout, p.cmd.Stderr = pw, pw
	start := time.Now()
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
						p.Serving = time.Since(start)
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
	p.Stop()
	return nil, nil, fmt.Errorf("%s: %w; its output ends:\n%s", filepath.Base(bin), err, p.tail)
}

// CPU is the user and system CPU the process has used so far (0 once it
// is gone).
func (p *Proc) CPU() time.Duration {
	d, _ := CPU(p.cmd.Process.Pid)
	return d
}

// Stop ends the process as an operator would (SIGTERM: a clean shutdown),
// killing it if it is still there after 20 s.
func (p *Proc) Stop() {
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

// CPU reads the user and system CPU of process pid from
// /proc/PID/stat.
func CPU(pid int) (time.Duration, error) {
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

// Pid is the process's id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Tick is the resolution of CPU: one clock tick.
func Tick() time.Duration { return time.Second / time.Duration(clockTicks()) }
