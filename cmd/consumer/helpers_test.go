package main

// Helpers of the process tests: the built binary, a running consumer whose
// output is read as it comes, the official producer, and checks of what was
// printed and committed.

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/clitest"
)

// The binary is built once per test run, into a directory TestMain removes.
var binary struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func consumerBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary and starts a cluster")
	}
	binary.once.Do(func() {
		binary.dir, binary.err = os.MkdirTemp("", "consumer-test-*")
		if binary.err != nil {
			return
		}
		binary.path = filepath.Join(binary.dir, "consumer")
		binary.err = clitest.GoBuild(".", binary.path)
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

func removeBinary() {
	if binary.dir != "" {
		_ = os.RemoveAll(binary.dir)
	}
}

// proc is a running consumer binary whose output is read as it comes.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	lines  chan string // stdout, line by line; closed at EOF
	errMu  sync.Mutex
	errBuf strings.Builder
	errSig chan struct{} // one slot: stderr grew
	readWG sync.WaitGroup
	waited bool
	code   int
}

func startConsumer(t *testing.T, namesrv string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(consumerBinary(t), args...)
	cmd.Env = append(os.Environ(), "NAMESRV_ADDR="+namesrv)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, lines: make(chan string, 10000), errSig: make(chan struct{}, 1)}
	p.readWG.Add(2)
	go func() {
		defer p.readWG.Done()
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	go func() {
		defer p.readWG.Done()
		buf := make([]byte, 4096)
		for {
			n, err := stderr.Read(buf)
			p.errMu.Lock()
			p.errBuf.Write(buf[:n])
			p.errMu.Unlock()
			select {
			case p.errSig <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		if !p.waited {
			_ = cmd.Process.Kill()
			p.readWG.Wait()
			_ = cmd.Wait()
		}
	})
	return p
}

func (p *proc) stderr() string {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return p.errBuf.String()
}

// waitStderr waits until stderr contains s.
func (p *proc) waitStderr(s string, timeout time.Duration) {
	p.t.Helper()
	deadline := time.After(timeout)
	for !strings.Contains(p.stderr(), s) {
		select {
		case <-p.errSig:
		case <-deadline:
			p.t.Fatalf("no %q on stderr within %v; stderr:\n%s", s, timeout, p.stderr())
		}
	}
}

// next returns the next stdout line.
func (p *proc) next(timeout time.Duration) string {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("stdout ended early; stderr:\n%s", p.stderr())
		}
		return l
	case <-time.After(timeout):
		p.t.Fatalf("no stdout line within %v; stderr:\n%s", timeout, p.stderr())
	}
	return ""
}

// wait waits for the exit and returns the exit code and the stdout lines
// not read yet.
func (p *proc) wait(timeout time.Duration) (int, []string) {
	p.t.Helper()
	var rest []string
	deadline := time.After(timeout)
	for done := false; !done; {
		select {
		case l, ok := <-p.lines:
			if !ok {
				done = true
				break
			}
			rest = append(rest, l)
		case <-deadline:
			_ = p.cmd.Process.Kill()
			p.t.Fatalf("consumer did not exit within %v; stderr:\n%s", timeout, p.stderr())
		}
	}
	p.readWG.Wait()
	err := p.cmd.Wait()
	p.waited = true
	if ee, ok := err.(*exec.ExitError); ok {
		p.code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatal(err)
	}
	return p.code, rest
}

// runConsumer runs the binary to its end.
func runConsumer(t *testing.T, namesrv string, args ...string) (code int, stdout []string, stderr string) {
	t.Helper()
	p := startConsumer(t, namesrv, args...)
	code, out := p.wait(60 * time.Second)
	return code, out, p.stderr()
}

// checkGroups fails t unless the consumer groups the cluster knows are
// exactly want: a run without --group must leave none behind (no offsets,
// no subscription config, no %RETRY% topic).
func checkGroups(t *testing.T, cl *cluster.Cluster, want ...string) {
	t.Helper()
	groups, err := cl.Admin(t).ConsumerGroups(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range groups {
		names = append(names, g.Name)
	}
	if !slices.Equal(names, want) {
		t.Errorf("the cluster knows groups %q, want %q", names, want)
	}
}

// binaryCluster builds the binary, starts a cluster with topic of queues
// queues and returns it with an official producer.
func binaryCluster(t *testing.T, topic string, queues int) (*cluster.Cluster, rocketmq.Producer) {
	t.Helper()
	consumerBinary(t)
	cl := cluster.Start(t)
	createTopic(t, cl, topic, queues)
	return cl, officialProducer(t, cl)
}

// withGroup is args with --group group, unless group is "".
func withGroup(group string, args ...string) []string {
	if group == "" {
		return args
	}
	return append(args, "--group", group)
}

// createTopic creates topic with n queues on every broker.
func createTopic(t *testing.T, cl *cluster.Cluster, topic string, n int) {
	t.Helper()
	adm := cl.Admin(t)
	if _, err := adm.CreateTopic(context.Background(), admin.TopicSpec{Topic: topic, ReadQueueNums: n, WriteQueueNums: n}); err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

var instanceSeq struct {
	sync.Mutex
	n int
}

// officialProducer starts the official client's producer.
func officialProducer(t *testing.T, cl *cluster.Cluster) rocketmq.Producer {
	t.Helper()
	instanceSeq.Lock()
	instanceSeq.n++
	name := fmt.Sprintf("consumer-test-%d-%d", os.Getpid(), instanceSeq.n)
	instanceSeq.Unlock()
	p, err := rocketmq.NewProducer(
		producer.WithNameServer([]string{cl.NamesrvAddr()}),
		producer.WithInstanceName(name),
		producer.WithGroupName("pg-"+name),
		producer.WithRetry(2),
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown() })
	return p
}

// sent is a message as the producer sent it and the broker placed it.
type sent struct {
	msgID       string
	queueID     int
	queueOffset int64
	keys        []string
	tag         string
	body        []byte
}

// testBody returns message i's body: text, except every fifth is binary.
func testBody(i int) []byte {
	if i%5 == 4 {
		return []byte{0x00, 0xff, byte(i), '\n'}
	}
	return []byte(fmt.Sprintf("body %d ✓", i))
}

// produce sends n messages to topic with two keys each and tags from tags
// in turn.
func produce(t *testing.T, p rocketmq.Producer, topic string, from, n int, tags ...string) []sent {
	t.Helper()
	var out []sent
	for i := from; i < from+n; i++ {
		keys := []string{fmt.Sprintf("key-%d", i), fmt.Sprintf("alt-%d", i)}
		tag := tags[i%len(tags)]
		body := testBody(i)
		msg := primitive.NewMessage(topic, body).WithKeys(keys).WithTag(tag)
		msg.WithProperty("seq", fmt.Sprint(i))
		res, err := p.SendSync(context.Background(), msg)
		if err != nil || res.Status != primitive.SendOK {
			t.Fatalf("send %d: %v %v", i, res, err)
		}
		out = append(out, sent{msgID: res.MsgID, queueID: res.MessageQueue.QueueId, queueOffset: res.QueueOffset, keys: keys, tag: tag, body: body})
	}
	return out
}

// jsonRecord is the part of a --format json line the tests check. It is
// declared apart from record so that a renamed field fails them.
type jsonRecord struct {
	Topic       string            `json:"topic"`
	QueueID     int               `json:"queueId"`
	QueueOffset int64             `json:"queueOffset"`
	MsgID       string            `json:"msgId"`
	OffsetMsgID string            `json:"offsetMsgId"`
	Keys        []string          `json:"keys"`
	Tags        string            `json:"tags"`
	Properties  map[string]string `json:"properties"`
	Body        *string           `json:"body"`
	BodyBase64  *string           `json:"bodyBase64"`
}

func (r jsonRecord) body(t *testing.T) []byte {
	t.Helper()
	switch {
	case r.Body != nil && r.BodyBase64 == nil:
		return []byte(*r.Body)
	case r.Body == nil && r.BodyBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*r.BodyBase64)
		if err != nil {
			t.Fatalf("bodyBase64 %q: %v", *r.BodyBase64, err)
		}
		return b
	}
	t.Fatalf("record %s has body %v and bodyBase64 %v, want exactly one", r.MsgID, r.Body, r.BodyBase64)
	return nil
}

func parseJSONLines(t *testing.T, lines []string) []jsonRecord {
	t.Helper()
	out := make([]jsonRecord, 0, len(lines))
	for _, l := range lines {
		var r jsonRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("stdout line is not JSON: %q: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}

// checkRecords asserts that recs are exactly the messages of want (any
// order), each with its topic, queue, offset, keys, tag, properties and
// body.
func checkRecords(t *testing.T, topic string, recs []jsonRecord, want []sent) {
	t.Helper()
	for r, s := range sentPrinted(t, recs, want) {
		if r.Topic != topic || r.QueueID != s.queueID || r.QueueOffset != s.queueOffset || r.OffsetMsgID == "" {
			t.Errorf("%s: topic %s queue %d offset %d offsetMsgId %q, want %s %d %d", r.MsgID, r.Topic, r.QueueID, r.QueueOffset, r.OffsetMsgID, topic, s.queueID, s.queueOffset)
		}
		if !slices.Equal(r.Keys, s.keys) || r.Tags != s.tag || r.Properties["TAGS"] != s.tag || r.Properties["seq"] == "" {
			t.Errorf("%s: keys %q tags %q properties %v, want %q %q", r.MsgID, r.Keys, r.Tags, r.Properties, s.keys, s.tag)
		}
		if b := r.body(t); string(b) != string(s.body) {
			t.Errorf("%s: body %q, want %q", r.MsgID, b, s.body)
		}
	}
}

// sentPrinted yields each record of recs with the message of want it
// prints, and fails the test for a record that prints none of them, for
// one printed twice and, once done, for any of want not printed.
func sentPrinted(t *testing.T, recs []jsonRecord, want []sent) iter.Seq2[jsonRecord, sent] {
	return func(yield func(jsonRecord, sent) bool) {
		byID := map[string]sent{}
		for _, s := range want {
			byID[s.msgID] = s
		}
		seen := map[string]bool{}
		for _, r := range recs {
			s, ok := byID[r.MsgID]
			switch {
			case !ok:
				t.Errorf("printed a message that was not expected: %+v", r)
				continue
			case seen[r.MsgID]:
				t.Errorf("printed %s twice", r.MsgID)
			}
			seen[r.MsgID] = true
			if !yield(r, s) {
				return
			}
		}
		if len(seen) != len(want) {
			t.Errorf("printed %d of the %d expected messages", len(seen), len(want))
		}
	}
}

// perQueue counts records by queue id.
func perQueue(recs []jsonRecord) map[int]int64 {
	out := map[int]int64{}
	for _, r := range recs {
		out[r.QueueID]++
	}
	return out
}

// checkCommitted asserts that group's committed offset of every queue of
// topic (one broker, queues starting at offset 0) is the number of
// messages printed from it, and that the broker's offsets make the lag
// wantLag.
func checkCommitted(t *testing.T, cl *cluster.Cluster, group, topic string, printed map[int]int64, wantLag int64) {
	t.Helper()
	rows, err := cl.Admin(t).ConsumerProgress(context.Background(), group, topic)
	if err != nil {
		t.Fatalf("progress of %s: %v", group, err)
	}
	var lag int64
	for _, r := range rows {
		if r.Topic != topic {
			continue
		}
		if r.ConsumerOffset != printed[int(r.QueueID)] {
			t.Errorf("group %s queue %d: committed offset %d, printed %d (broker offset %d)", group, r.QueueID, r.ConsumerOffset, printed[int(r.QueueID)], r.BrokerOffset)
		}
		lag += r.Lag
	}
	if lag != wantLag {
		t.Errorf("group %s: lag %d, want %d (%+v)", group, lag, wantLag, rows)
	}
}

// filterSent returns the messages of msgs that recs printed (to check the
// printed ones' contents when which ones is not determined).
func filterSent(msgs []sent, recs []jsonRecord) []sent {
	var out []sent
	for _, s := range msgs {
		if slices.ContainsFunc(recs, func(r jsonRecord) bool { return r.MsgID == s.msgID }) {
			out = append(out, s)
		}
	}
	return out
}
