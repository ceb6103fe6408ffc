package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/goleak"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func buildBinary(t *testing.T) string { return clitest.Build(t, ".", "broker") }

// proc is a running broker process.
type proc struct {
	cmd     *exec.Cmd
	addr    string
	started time.Time
	serving time.Duration // from exec to the serving line
	stderr  *strings.Builder
}

func startProc(t *testing.T, bin string, args ...string) *proc {
	t.Helper()
	if !slices.Contains(args, "--grpc-listen") {
		// The gRPC door's default is a fixed port; tests take free ones.
		args = append(args, "--grpc-listen", "127.0.0.1:0")
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "NAMESRV_ADDR=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stderr: &strings.Builder{}}
	cmd.Stderr = p.stderr
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case line := <-lines:
		p.serving = time.Since(p.started)
		rest, ok := strings.CutPrefix(line, "broker: serving on ")
		if !ok {
			t.Fatalf("first line %q; stderr:\n%s", line, p.stderr)
		}
		p.addr, _, _ = strings.Cut(rest, " ")
	case <-time.After(20 * time.Second):
		t.Fatalf("no serving line; stderr:\n%s", p.stderr)
	}
	return p
}

func (p *proc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v; stderr:\n%s", err, p.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("did not exit after SIGINT; stderr:\n%s", p.stderr)
	}
}

// invoker sends requests to p on cl, as clitest.Invoke does.
func (p *proc) invoker(t *testing.T, cl *remoting.Client) func(*protocol.Command) *protocol.Command {
	return func(req *protocol.Command) *protocol.Command { return clitest.Invoke(t, cl, p.addr, req) }
}

// kill ends p with SIGKILL: nothing of its shutdown runs.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
}

// createTopic creates topic with queues read and write queues, or fails
// the test.
func createTopic(t *testing.T, invoke func(*protocol.Command) *protocol.Command, topic string, queues int32) {
	t.Helper()
	resp := invoke(protocol.NewRequest(protocol.ReqUpdateAndCreateTopic, protocol.CreateTopicRequestHeader{
		Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: queues, WriteQueueNums: queues, Perm: 6, TopicFilterType: "SINGLE_TAG"}.Encode(), nil))
	if resp.Code != protocol.RespSuccess {
		t.Fatalf("create topic %s: %d %s", topic, resp.Code, resp.Remark)
	}
}

// send sends one message of body with props to topic, or fails the test.
func send(t *testing.T, invoke func(*protocol.Command) *protocol.Command, topic, body string, props map[string]string) {
	t.Helper()
	hdr := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: topic, DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 4, QueueID: -1, BornTimestamp: time.Now().UnixMilli(), Properties: message.MarshalProperties(props)}
	resp := invoke(protocol.NewRequest(protocol.ReqSendMessage, hdr.Encode(), []byte(body)))
	if resp.Code != protocol.RespSuccess {
		t.Fatalf("send %s: code %d %s", body, resp.Code, resp.Remark)
	}
}

// brokerConf writes a broker.conf of lines and a storePathRootDir beside
// it, in a new temporary directory, and returns its path.
func brokerConf(t *testing.T, lines string) string {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "broker.conf")
	if err := os.WriteFile(conf, []byte("storePathRootDir="+filepath.Join(dir, "store")+"\n"+lines), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}

// startConf starts bin on conf (a free port, warn logging) with a client
// of its own, closed when the test ends.
func startConf(t *testing.T, bin, conf string) (*proc, *remoting.Client) {
	t.Helper()
	p := startProc(t, bin, "-c", conf, "--listen", "127.0.0.1:0", "--log-level", "warn")
	cl := remoting.NewClient(remoting.DefaultClientConfig())
	t.Cleanup(func() { _ = cl.Close() })
	return p, cl
}

// call sends req to addr, unsigned, on a client of its own.
func call(t *testing.T, addr string, req *protocol.Command) *protocol.Command {
	t.Helper()
	return clitest.Call(t, addr, acl.Credentials{}, req)
}

// TestProcessKeepsOffsetsAcrossSIGTERM runs the real binary with a
// broker.conf and flags: an offset committed just before SIGTERM is there
// after the restart, because shutdown persists offsets.
func TestProcessKeepsOffsetsAcrossSIGTERM(t *testing.T) {
	bin := buildBinary(t)
	conf := brokerConf(t, "brokerName=broker-conf\nbrokerClusterName=C1\nlistenPort=1\n")
	run := func() *proc {
		// --listen wins over listenPort from the file.
		return startProc(t, bin, "-c", conf, "--listen", "127.0.0.1:0", "--log-level", "debug")
	}
	p := run()
	createTopic(t, func(req *protocol.Command) *protocol.Command { return call(t, p.addr, req) }, "T", 1)
	resp := call(t, p.addr, protocol.NewRequest(protocol.ReqUpdateConsumerOffset, protocol.UpdateConsumerOffsetRequestHeader{
		ConsumerGroup: "g", Topic: "T", QueueID: 0, CommitOffset: 42}.Encode(), nil))
	if resp.Code != 0 {
		t.Fatalf("update offset: %d %s", resp.Code, resp.Remark)
	}
	p.stop(t)
	if !strings.Contains(p.stderr.String(), "broker-conf") {
		t.Errorf("broker name from broker.conf not used; stderr:\n%s", p.stderr)
	}

	p = run()
	resp = call(t, p.addr, protocol.NewRequest(protocol.ReqQueryConsumerOffset, protocol.QueryConsumerOffsetRequestHeader{
		ConsumerGroup: "g", Topic: "T", QueueID: 0}.Encode(), nil))
	if resp.Code != 0 || resp.Ext("offset") != "42" {
		t.Fatalf("offset after restart: code %d offset %q", resp.Code, resp.Ext("offset"))
	}
	p.stop(t)
}

func rssKiB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	n := vmRSS(b)
	if n == 0 {
		t.Fatal("no VmRSS")
	}
	return n
}

// TestFootprint measures the real binary: time from exec to the serving
// line, RSS when idle, and RSS after a million 1 KiB messages (sent as
// batches of 100 by 4 concurrent senders). It writes nothing; run it with
// RUNNEL_FOOTPRINT=1 go test -run Footprint -v ./cmd/broker.
func TestFootprint(t *testing.T) {
	if os.Getenv("RUNNEL_FOOTPRINT") == "" {
		t.Skip("set RUNNEL_FOOTPRINT=1 to measure (sends 1 GiB)")
	}
	bin := buildBinary(t)
	var starts []time.Duration
	for range 5 {
		p := startProc(t, bin, "--listen", "127.0.0.1:0", "--store-dir", t.TempDir(), "--log-level", "warn")
		starts = append(starts, p.serving)
		p.stop(t)
	}
	t.Logf("exec to serving: %v", starts)

	dir := t.TempDir()
	p := startProc(t, bin, "--listen", "127.0.0.1:0", "--store-dir", dir, "--log-level", "warn")
	time.Sleep(2 * time.Second)
	t.Logf("idle RSS: %d KiB", rssKiB(t, p.cmd.Process.Pid))

	createTopic(t, func(req *protocol.Command) *protocol.Command { return call(t, p.addr, req) }, "F", 4)
	const total, per, senders = 1_000_000, 100, 4
	body := batchBody(per, 1024)
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var sendErr error
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := remoting.NewClient(remoting.DefaultClientConfig())
			defer c.Close()
			hdr := protocol.SendMessageRequestHeader{ProducerGroup: "pg", Topic: "F", DefaultTopic: "TBW102",
				DefaultTopicQueueNums: 4, QueueID: int32(s), BornTimestamp: time.Now().UnixMilli(), Batch: true}.EncodeV2()
			for range total / per / senders {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				r, err := c.Invoke(ctx, p.addr, protocol.NewRequest(protocol.ReqSendBatchMessage, hdr, body))
				cancel()
				if err == nil && r.Code != 0 {
					err = fmt.Errorf("code %d: %s", r.Code, r.Remark)
				}
				if err != nil {
					mu.Lock()
					sendErr = err
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if sendErr != nil {
		t.Fatal(sendErr)
	}
	el := time.Since(start)
	t.Logf("sent %d x 1 KiB in %v (%.0f msg/s)", total, el, total/el.Seconds())
	t.Logf("RSS after 1M messages: %d KiB", rssKiB(t, p.cmd.Process.Pid))
	time.Sleep(10 * time.Second)
	t.Logf("RSS 10 s later: %d KiB", rssKiB(t, p.cmd.Process.Pid))
	p.stop(t)
}

// batchBody lays out n messages of size bytes as a SEND_BATCH_MESSAGE body.
func batchBody(n, size int) []byte {
	var dst []byte
	payload := make([]byte, size)
	for range n {
		total := 20 + size + 2
		dst = appendU32(dst, uint32(total))
		dst = appendU32(dst, 0)
		dst = appendU32(dst, 0)
		dst = appendU32(dst, 0)
		dst = appendU32(dst, uint32(size))
		dst = append(dst, payload...)
		dst = append(dst, 0, 0)
	}
	return dst
}

func appendU32(b []byte, v uint32) []byte {
	return append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// parseArgs is the configuration the command builds from args.
func parseArgs(getenv func(string) string, log *slog.Logger, args ...string) (config.Config, error) {
	fs := pflag.NewFlagSet("broker", pflag.ContinueOnError)
	var f cmdFlags
	bindFlags(fs, &f)
	if err := fs.Parse(args); err != nil {
		return config.Config{}, err
	}
	return buildConfig(fs, &f, getenv, log)
}

func noEnv(string) string { return "" }

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestBuildConfigLayers(t *testing.T) {
	conf := clitest.WriteFile(t, "broker.conf", "brokerName=from-file\nlistenPort=20911\nstorePathRootDir=/from/file\n")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "NAMESRV_ADDR" {
				return v
			}
			return ""
		}
	}
	parse := func(getenv func(string) string, args ...string) (config.Config, error) {
		return parseArgs(getenv, log, args...)
	}
	cfg, err := parse(env("10.0.0.9:9876;10.0.0.8:9876"), "-c", conf, "--broker-name", "from-flag")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BrokerName != "from-flag" || cfg.ListenAddr != ":20911" || cfg.StoreDir != "/from/file" ||
		len(cfg.NamesrvAddrs) != 2 || cfg.NamesrvAddrs[0] != "10.0.0.9:9876" {
		t.Fatalf("layered config %+v", cfg)
	}
	cfg, err = parse(env("10.0.0.9:9876"), "--namesrv", "127.0.0.1:9876", "--flush-disk-type", "SYNC_FLUSH")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.NamesrvAddrs) != 1 || cfg.NamesrvAddrs[0] != "127.0.0.1:9876" || cfg.StoreDir != filepath.Join(os.TempDir(), "runnel-broker") || cfg.FlushMode.String() != "SYNC_FLUSH" {
		t.Fatalf("flags over env: %+v", cfg)
	}
	// -n is the name server, as in mqadmin and every Runnel CLI.
	if cfg, err := parse(env(""), "-n", "10.0.0.7:9876"); err != nil || len(cfg.NamesrvAddrs) != 1 || cfg.NamesrvAddrs[0] != "10.0.0.7:9876" {
		t.Fatalf("-n: %+v %v", cfg.NamesrvAddrs, err)
	}
	if _, err := parse(env(""), "--flush-disk-type", "SOMETIMES"); err == nil {
		t.Fatal("bad flush type accepted")
	}
}
