package remoting

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting/protocol"
)

const codeRun int16 = 1010

// recordingOwner is a runOwner that records what a Conn dispatches.
type recordingOwner struct {
	poolOwner
	mu      sync.Mutex
	singles []int32   // opaques dispatched alone
	runs    [][]int32 // opaques of each run
}

func (o *recordingOwner) runnable(code int16) bool { return code == codeRun }
func (o *recordingOwner) dispatch(_ *Conn, req *protocol.Command) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.singles = append(o.singles, req.Opaque)
	return true
}
func (o *recordingOwner) dispatchRun(_ *Conn, reqs []*protocol.Command, _ [][]byte) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	var ops []int32
	for _, r := range reqs {
		ops = append(ops, r.Opaque)
	}
	o.runs = append(o.runs, ops)
	return true
}
func (o *recordingOwner) serveRun(*Conn, []*protocol.Command) bool { panic("not used") }

func frames(t *testing.T, codes ...int16) []byte {
	var b []byte
	for i, code := range codes {
		req := protocol.NewRequest(code, nil, nil)
		req.Opaque = int32(i)
		b = append(b, mustFrame(t, req)...)
	}
	return b
}

// The runnable requests decoded from one read go out as one run, in the
// order they came, and the others one by one; a lone runnable request
// is dispatched as any other, and a run is cut at maxRun.
func TestRequestsOfOneReadMakeARun(t *testing.T) {
	o := &recordingOwner{}
	c := newConn(o, nil, "peer", "local", 1<<24, 0, quietLogger())
	seq := []int16{codeRun, codeRun, codeEcho, codeRun, codeEcho, codeRun}
	if err := c.feed(frames(t, seq...)); err != nil {
		t.Fatal(err)
	}
	if want := [][]int32{{0, 1, 3, 5}}; fmt.Sprint(o.runs) != fmt.Sprint(want) {
		t.Fatalf("runs %v, want %v", o.runs, want)
	}
	if want := []int32{2, 4}; !slices.Equal(o.singles, want) {
		t.Fatalf("dispatched alone %v, want %v", o.singles, want)
	}
	if got := c.serving.Load(); got != int32(len(seq)) {
		t.Fatalf("serving %d, want %d", got, len(seq))
	}

	o.runs, o.singles = nil, nil
	if err := c.feed(frames(t, codeRun)); err != nil {
		t.Fatal(err)
	}
	if len(o.runs) != 0 || !slices.Equal(o.singles, []int32{0}) {
		t.Fatalf("a lone request: runs %v, alone %v", o.runs, o.singles)
	}

	// A frame split across reads joins the run of the read that completes it.
	o.runs, o.singles = nil, nil
	b := frames(t, codeRun, codeRun, codeRun)
	cut := len(b) - 3
	if err := c.feed(b[:cut]); err != nil {
		t.Fatal(err)
	}
	if err := c.feed(b[cut:]); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(o.runs) != "[[0 1]]" || !slices.Equal(o.singles, []int32{2}) {
		t.Fatalf("split read: runs %v, alone %v", o.runs, o.singles)
	}

	// Bodies over maxRunBytes cut the run; one larger than that is alone.
	o.runs, o.singles = nil, nil
	var big []byte
	for i, size := range []int{maxRunBytes / 2, maxRunBytes / 2, 1, maxRunBytes + 1, 10, 10} {
		req := protocol.NewRequest(codeRun, nil, make([]byte, size))
		req.Opaque = int32(i)
		big = append(big, mustFrame(t, req)...)
	}
	if err := c.feed(big); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(o.runs) != "[[0 1] [4 5]]" || !slices.Equal(o.singles, []int32{2, 3}) {
		t.Fatalf("large bodies: runs %v, alone %v", o.runs, o.singles)
	}

	o.runs, o.singles = nil, nil
	many := make([]int16, maxRun+5)
	for i := range many {
		many[i] = codeRun
	}
	if err := c.feed(frames(t, many...)); err != nil {
		t.Fatal(err)
	}
	if len(o.runs) != 2 || len(o.runs[0]) != maxRun || len(o.runs[1]) != 5 || len(o.singles) != 0 {
		t.Fatalf("%d requests made runs of %v and %d alone", len(many), lens(o.runs), len(o.singles))
	}
}

func lens(runs [][]int32) []int {
	var n []int
	for _, r := range runs {
		n = append(n, len(r))
	}
	return n
}

// Over the wire: every request of a burst is answered once, with its own
// opaque, whether a run or its Handler served it; a oneway one is not
// answered; interceptors see each request of a run alone, and one they
// refuse is answered with the refusal and never reaches the run handler.
// Bursts are written with one write each until the server has served runs
// (the kernel decides how a burst is read, so one burst may come in parts).
func TestRunsOverTheWire(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		var mu sync.Mutex
		var inRuns, alone, responded int
		var refusedReached bool
		s := startServer(t, tr, func(cfg *ServerConfig) {
			cfg.Interceptors = []Interceptor{{
				Request: func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
					if req.Ext("deny") != "" {
						return protocol.NewResponse(req, protocol.RespNoPermission, "denied")
					}
					return nil
				},
				Response: func(_ *Conn, req, resp *protocol.Command, _ time.Duration) {
					mu.Lock()
					defer mu.Unlock()
					responded++
				},
			}}
		}, map[int16]Handler{codeRun: func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
			mu.Lock()
			alone++
			mu.Unlock()
			resp := protocol.NewResponse(req, protocol.RespSuccess, "alone")
			resp.Body = req.Body
			return resp
		}})
		s.HandleRun([]int16{codeRun}, func(_ context.Context, _ *Conn, reqs, resps []*protocol.Command) {
			mu.Lock()
			defer mu.Unlock()
			for i, req := range reqs {
				refusedReached = refusedReached || req.Ext("deny") != ""
				inRuns++
				resps[i] = protocol.NewResponse(req, protocol.RespSuccess, fmt.Sprint("run of ", len(reqs)))
				resps[i].Body = req.Body
			}
		})
		nc := rawConn(t, s.Addr())
		const n = 12
		for burst := 0; ; burst++ {
			var buf []byte
			for i := range n {
				req := protocol.NewRequest(codeRun, map[string]string{}, []byte(fmt.Sprint("body ", i)))
				req.Opaque = int32(burst*100 + i)
				switch i {
				case 4:
					req.SetExt("deny", "yes")
				case 7:
					req.Flag |= protocol.FlagOneway
				}
				buf = append(buf, mustFrame(t, req)...)
			}
			if _, err := nc.Write(buf); err != nil {
				t.Fatal(err)
			}
			got := map[int32]*protocol.Command{}
			for range n - 1 { // the oneway one gets no answer
				resp, err := readFrame(t, nc)
				if err != nil {
					t.Fatal(err)
				}
				if got[resp.Opaque] != nil {
					t.Fatalf("opaque %d answered twice", resp.Opaque)
				}
				got[resp.Opaque] = resp
			}
			for i := range n {
				resp := got[int32(burst*100+i)]
				switch {
				case i == 7:
					if resp != nil {
						t.Fatalf("the oneway request was answered: %v", resp)
					}
				case i == 4:
					if resp == nil || resp.Code != protocol.RespNoPermission {
						t.Fatalf("the refused request: %v", resp)
					}
				case resp == nil || resp.Code != protocol.RespSuccess || string(resp.Body) != fmt.Sprint("body ", i):
					t.Fatalf("request %d of burst %d: %v", i, burst, resp)
				}
			}
			mu.Lock()
			runs, served, leaked := inRuns, inRuns+alone, refusedReached
			mu.Unlock()
			if leaked {
				t.Fatal("a request refused by an interceptor reached the run handler")
			}
			if want := (burst + 1) * (n - 1); served != want {
				t.Fatalf("after %d bursts handlers served %d requests, want %d", burst+1, served, want)
			}
			testwaitResponses(t, &mu, &responded, (burst+1)*n)
			if runs > 0 {
				return
			}
			if burst == 50 {
				t.Fatalf("no run in %d bursts of %d requests written at once", burst+1, n)
			}
		}
	})
}

// testwaitResponses waits until the Response hooks ran n times: the
// oneway request's run after its handler, with no answer to wait for.
func testwaitResponses(t *testing.T, mu *sync.Mutex, got *int, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		g := *got
		mu.Unlock()
		if g == n {
			return
		}
		if g > n || time.Now().After(deadline) {
			t.Fatalf("Response hooks ran %d times, want %d", g, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A run handler that panics gets every request of its run a SYSTEM_ERROR
// answer, and the connection goes on.
func TestRunHandlerPanic(t *testing.T) {
	s := startServer(t, TransportNetpoll, nil, map[int16]Handler{codeRun: echo})
	s.HandleRun([]int16{codeRun}, func(context.Context, *Conn, []*protocol.Command, []*protocol.Command) {
		panic("boom")
	})
	nc := rawConn(t, s.Addr())
	for burst := 0; burst <= 50; burst++ {
		if _, err := nc.Write(frames(t, codeRun, codeRun, codeRun)); err != nil {
			t.Fatal(err)
		}
		panicked := 0
		for range 3 {
			resp, err := readFrame(t, nc)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case resp.Code == protocol.RespSystemError && strings.Contains(resp.Remark, "panicked: boom"):
				panicked++
			case resp.Code != protocol.RespSuccess:
				t.Fatalf("answer %v", resp)
			}
		}
		if panicked == 3 || panicked == 2 {
			return // the run's requests all got the panic's answer
		}
		if panicked == 1 {
			t.Fatalf("one request of a run got the panic's answer, the rest did not")
		}
	}
	t.Fatal("no run in 51 bursts")
}

// TestRunFramesRecycled: the frames of a run its handler served, with
// answers that carry no body, go back to the frame pools; a run answered
// with bodies, and a lone request, keep theirs. The handlers here keep the
// bodies, against the contract, only to see where they were: the test
// compares addresses and never reads what was recycled (a read would race
// with the frame's next use, which is the point of the contract). The
// bodies are of a pooled size (a 1 KiB message's send).
func TestRunFramesRecycled(t *testing.T) {
	var recycled sync.Map // start address of each frame put back -> its end
	hook := func(b []byte) {
		start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		recycled.Store(start, start+uintptr(cap(b)))
	}
	putFrameHook.Store(&hook)
	t.Cleanup(func() { putFrameHook.Store(nil) })
	forEachTransport(t, func(t *testing.T, tr string) {
		var mu sync.Mutex
		var kept []uintptr // where the bodies the handlers saw were
		var runs int
		var conn *Conn
		keep := func(body []byte) { kept = append(kept, uintptr(unsafe.Pointer(unsafe.SliceData(body)))) }
		s := startServer(t, tr, nil, map[int16]Handler{codeRun: func(_ context.Context, c *Conn, req *protocol.Command) *protocol.Command {
			mu.Lock()
			defer mu.Unlock()
			keep(req.Body)
			conn = c
			return protocol.NewResponse(req, protocol.RespSuccess, "alone")
		}})
		s.HandleRun([]int16{codeRun}, func(_ context.Context, c *Conn, reqs, resps []*protocol.Command) {
			mu.Lock()
			defer mu.Unlock()
			runs++
			conn = c
			for i, req := range reqs {
				keep(req.Body)
				resps[i] = protocol.NewResponse(req, protocol.RespSuccess, "")
				if req.Ext("echo") != "" {
					resps[i].Body = req.Body
				}
			}
		})
		nc := rawConn(t, s.Addr())
		body := bytes.Repeat([]byte{'m'}, 1024)
		// send writes n requests at once and reads their answers, until
		// the server made a run of them or not as wanted (a read may split
		// them), then waits until the connection's handlers are done.
		send := func(n int, echo bool) (inRun bool) {
			for attempt := 0; ; attempt++ {
				mu.Lock()
				kept, runs = nil, 0
				mu.Unlock()
				recycled.Clear()
				var buf []byte
				for i := range n {
					req := protocol.NewRequest(codeRun, map[string]string{}, body)
					req.Opaque = int32(attempt*100 + i)
					if echo {
						req.SetExt("echo", "yes")
					}
					buf = append(buf, mustFrame(t, req)...)
				}
				if _, err := nc.Write(buf); err != nil {
					t.Fatal(err)
				}
				for range n {
					if _, err := readFrame(t, nc); err != nil {
						t.Fatal(err)
					}
				}
				mu.Lock()
				c, made := conn, runs > 0
				mu.Unlock()
				testwait.For(t, 5*time.Second, "the connection's handlers to finish", func() bool { return c.serving.Load() == 0 })
				if made == (n > 1) || attempt == 50 {
					return made
				}
			}
		}
		// inRecycled counts the kept bodies that lay in a frame put back.
		inRecycled := func() (n int) {
			mu.Lock()
			defer mu.Unlock()
			for _, p := range kept {
				recycled.Range(func(k, v any) bool {
					if p >= k.(uintptr) && p < v.(uintptr) {
						n++
						return false
					}
					return true
				})
			}
			return n
		}
		if !send(8, false) {
			t.Fatal("no run in 50 bursts of 8 requests written at once")
		}
		if inRecycled() == 0 {
			t.Fatal("the frames of a run answered without bodies were not recycled")
		}
		if !send(8, true) {
			t.Fatal("no run in 50 bursts of 8 requests written at once")
		}
		if n := inRecycled(); n != 0 {
			t.Fatalf("%d frames of a run answered with their bodies were recycled", n)
		}
		if send(1, false) {
			t.Fatal("a lone request made a run")
		}
		if inRecycled() != 0 {
			t.Fatal("a lone request's frame was recycled")
		}
	})
}
