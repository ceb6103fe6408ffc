package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// httpDoor is a test-only front door: a small HTTP protocol adapted onto
// the core, as the remoting door adapts RocketMQ's. It proves that a
// second door is a sibling of the first: it shares the core (its sends
// wake the remoting door's held pulls and the other way round) and the
// process's lifecycle, and it touches no file of the remoting door.
//
//	POST /send?topic=T&queue=Q   body: the message body  -> {"offset":N}
//	GET  /pull?group=G&topic=T&queue=Q&offset=N&holdMs=H -> {"status":S,"next":N,"bodies":[...]}
type httpDoor struct {
	core *core.Core
	srv  *http.Server
	ln   net.Listener
	conn atomic.Uint64

	mu     sync.Mutex
	events []string // the lifecycle calls and answers, in order
}

func newHTTPDoor(c *core.Core) *httpDoor {
	d := &httpDoor{core: c}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /send", d.send)
	mux.HandleFunc("GET /pull", d.pull)
	d.srv = &http.Server{Handler: mux}
	return d
}

func (d *httpDoor) note(e string) {
	d.mu.Lock()
	d.events = append(d.events, e)
	d.mu.Unlock()
}

func (d *httpDoor) Events() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.events...)
}

func (d *httpDoor) Name() string { return "http-test" }

func (d *httpDoor) Start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	d.ln = ln
	go func() { _ = d.srv.Serve(ln) }()
	d.note("start")
	return nil
}

func (d *httpDoor) Addr() string {
	if d.ln == nil {
		return ""
	}
	return d.ln.Addr().String()
}

// StopAccepting closes the listener: connections already open are served
// on (net/http serves each on its own goroutine).
func (d *httpDoor) StopAccepting() {
	d.note("stop accepting")
	_ = d.ln.Close()
}

func (d *httpDoor) Close() error {
	d.note("close")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// StopAccepting closed the listener already; Shutdown may close it
	// again before Serve has let go of it.
	if err := d.srv.Shutdown(ctx); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

func (d *httpDoor) send(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	q, _ := strconv.Atoi(r.URL.Query().Get("queue"))
	res, err := d.core.Send(core.SendRequest{
		ProducerGroup: "http-producer", Topic: r.URL.Query().Get("topic"), QueueID: int32(q),
		DefaultTopic: "TBW102", DefaultTopicQueueNums: 4, MaxReconsumeTimes: -1,
		BornTimestamp: time.Now().UnixMilli(), BornHost: netip.MustParseAddrPort("127.0.0.1:1"), Client: r.RemoteAddr,
		Messages: []core.SendMessage{{Body: body}},
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]int64{"offset": res.QueueOffset})
}

type pullAnswer struct {
	Status core.PullStatus `json:"status"`
	Next   int64           `json:"next"`
	Bodies []string        `json:"bodies"`
}

func (d *httpDoor) pull(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	q, _ := strconv.Atoi(v.Get("queue"))
	off, _ := strconv.ParseInt(v.Get("offset"), 10, 64)
	hold, _ := strconv.Atoi(v.Get("holdMs"))
	ch := &httpChannel{id: d.conn.Add(1), addr: r.RemoteAddr}
	type later struct {
		res core.PullResult
		err error
	}
	answered := make(chan later, 1)
	res, held, err := d.core.Pull(core.PullRequest{
		Group: v.Get("group"), Topic: v.Get("topic"), QueueID: int32(q), QueueOffset: off, MaxMsgNums: 32,
		Suspend: hold > 0, SuspendTimeout: time.Duration(hold) * time.Millisecond, HasSubscription: true,
		ExpressionType: message.ExpressionTypeTag, Expression: "*", From: ch,
	}, func(r core.PullResult, e error) {
		// Noted as the core answers, which Close's order puts before
		// the doors close; the handler may write it out after.
		d.note(fmt.Sprintf("held pull answered: %d messages", r.Count))
		answered <- later{r, e}
	})
	if held {
		l := <-answered
		res, err = l.res, l.err
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out := pullAnswer{Status: res.Status, Next: res.NextBeginOffset, Bodies: []string{}}
	if res.Status == core.PullFound {
		msgs, derr := message.DecodeMessages(res.Messages)
		if derr != nil {
			http.Error(w, derr.Error(), http.StatusInternalServerError)
			return
		}
		for _, m := range msgs {
			out.Bodies = append(out.Bodies, string(m.Body))
		}
	}
	_ = json.NewEncoder(w).Encode(out)
}

// httpChannel is an HTTP request as the core's Channel: it cannot be
// called back, so the core's calls to it fail or do nothing.
type httpChannel struct {
	core.NoCallbacks
	id   uint64
	addr string
}

func (c *httpChannel) ID() uint64         { return c.id }
func (c *httpChannel) RemoteAddr() string { return c.addr }
func (c *httpChannel) Closed() bool       { return false }

func httpSend(t *testing.T, d *httpDoor, topic string, q int, body string) {
	t.Helper()
	resp, err := http.Post("http://"+d.Addr()+"/send?topic="+topic+"&queue="+strconv.Itoa(q), "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("send through the http door: %s %s", resp.Status, b)
	}
}

func httpPull(d *httpDoor, topic string, q int, offset int64, hold time.Duration) (pullAnswer, error) {
	url := fmt.Sprintf("http://%s/pull?group=hg&topic=%s&queue=%d&offset=%d&holdMs=%d", d.Addr(), topic, q, offset, hold.Milliseconds())
	resp, err := http.Get(url)
	if err != nil {
		return pullAnswer{}, err
	}
	defer resp.Body.Close()
	var a pullAnswer
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return a, fmt.Errorf("%s: %s", resp.Status, b)
	}
	return a, json.NewDecoder(resp.Body).Decode(&a)
}

// remotingPull pulls one queue through the remoting door and returns the
// bodies.
func remotingPull(t *testing.T, rc *rawClient, topic string, q int32, offset int64) []string {
	t.Helper()
	h := pullHeader("rg", topic, q, offset, 32, protocol.PullFlagSubscription)
	h.Subscription = "*"
	resp := rc.call(protocol.ReqPullMessage, h.Encode(), nil)
	expect(t, resp, protocol.RespSuccess, "")
	return bodiesOf(t, resp)
}

// heldHTTPPull starts a pull through the HTTP door held up to 20 s; its
// answer comes on the channel.
func heldHTTPPull(t *testing.T, d *httpDoor, topic string, q int, offset int64) <-chan pullAnswer {
	answer := make(chan pullAnswer, 1)
	go func() {
		a, err := httpPull(d, topic, q, offset, 20*time.Second)
		if err != nil {
			t.Error(err)
		}
		answer <- a
	}()
	return answer
}

// TestSecondDoorSharesTheCore: a broker with a test-only HTTP door beside
// its remoting door. A message sent through either is received through the
// other, a pull held at one door is woken by a send through the other,
// and Close runs the documented order: every door stops accepting, the
// held pull is answered while its connection is open, then the doors
// close.
func TestSecondDoorSharesTheCore(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := newHTTPDoor(b.Core())
	if err := b.AddDoor(d); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = b.Close()
		}
	})
	if err := b.AddDoor(newHTTPDoor(b.Core())); err == nil {
		t.Fatal("a door was added after Start")
	}
	if got := len(b.Doors()); got != 2 || b.Doors()[1].Addr() != d.Addr() {
		t.Fatalf("doors %v", b.Doors())
	}
	rc := newRawClient(t, b.Addr())
	rc.createTopic("Door", 1)

	// remoting in, HTTP out.
	expect(t, rc.send("Door", 0, "", "via remoting"), protocol.RespSuccess, "")
	got, err := httpPull(d, "Door", 0, 0, 0)
	if err != nil || got.Status != core.PullFound || len(got.Bodies) != 1 || got.Bodies[0] != "via remoting" {
		t.Fatalf("pull through the http door: %+v %v", got, err)
	}
	// HTTP in, remoting out.
	httpSend(t, d, "Door", 0, "via http")
	if bodies := remotingPull(t, rc, "Door", 0, 1); len(bodies) != 1 || bodies[0] != "via http" {
		t.Fatalf("pull through the remoting door: %q", bodies)
	}

	// A pull held at the HTTP door, woken by a send through remoting.
	woken := heldHTTPPull(t, d, "Door", 0, 2)
	waitHeld(t, b, "Door", 0, 1)
	expect(t, rc.send("Door", 0, "wake", "wakes the held pull"), protocol.RespSuccess, "")
	select {
	case a := <-woken:
		if a.Status != core.PullFound || len(a.Bodies) != 1 || a.Bodies[0] != "wakes the held pull" {
			t.Fatalf("woken pull: %+v", a)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the held pull was not woken by a send through the other door")
	}

	// Close with a pull held: it is answered before the doors close.
	last := heldHTTPPull(t, d, "Door", 0, 3)
	waitHeld(t, b, "Door", 0, 1)
	closed = true
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	a := <-last
	if a.Status != core.PullNoNewMessage || a.Next != 3 {
		t.Fatalf("held pull answered on close: %+v", a)
	}
	want := []string{"start", "held pull answered: 1 messages", "stop accepting", "held pull answered: 0 messages", "close"}
	if ev := d.Events(); fmt.Sprint(ev) != fmt.Sprint(want) {
		t.Fatalf("door lifecycle %q, want %q", ev, want)
	}
}

// waitHeld waits until n pulls are held on a queue.
func waitHeld(t *testing.T, b *Broker, topic string, q int32, n int) {
	t.Helper()
	testwait.Until(t, 10*time.Second, "the pull held", func() error {
		if got := len(b.Core().HeldOffsets(topic, q)); got != n {
			return fmt.Errorf("%d pulls held on %s/%d, want %d", got, topic, q, n)
		}
		return nil
	})
}
