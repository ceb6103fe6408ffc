package protocol

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// fakePeer is a minimal RocketMQ server for tests: it reads frames with this
// package's decoder, records them, and answers with what handle returns
// (nil: no answer). It lets the official client talk to our codec over a
// real socket, so captured frames are the client's own bytes.
type fakePeer struct {
	t      *testing.T
	ln     net.Listener
	addr   string
	handle func(req *Command) *Command

	mu     sync.Mutex
	frames []captured
	conns  map[net.Conn]struct{}
	notify chan struct{}
	wg     sync.WaitGroup
}

type captured struct {
	raw []byte // the frame after its length prefix
	cmd *Command
}

func startFakePeer(t *testing.T, handle func(req *Command) *Command) *fakePeer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &fakePeer{
		t: t, ln: ln, addr: ln.Addr().String(), handle: handle,
		conns: map[net.Conn]struct{}{}, notify: make(chan struct{}, 1),
	}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *fakePeer) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *fakePeer) serve(c net.Conn) {
	defer p.wg.Done()
	defer c.Close()
	var writeMu sync.Mutex
	for {
		frame, err := ReadFrame(c, MaxFrameSize)
		if errors.Is(err, ErrFrameTooLarge) || errors.Is(err, ErrFrameTooShort) {
			p.t.Errorf("fake peer: %v", err)
			return
		}
		if err != nil {
			return
		}
		cmd, err := DecodeFrame(frame)
		if err != nil {
			p.t.Errorf("fake peer: decode %q: %v", frame, err)
			return
		}
		p.mu.Lock()
		p.frames = append(p.frames, captured{raw: frame, cmd: cmd})
		p.mu.Unlock()
		select {
		case p.notify <- struct{}{}:
		default:
		}
		if cmd.IsResponse() || p.handle == nil {
			continue
		}
		// Requests are handled concurrently, as a broker does, so a held
		// pull never delays a lock request behind it.
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			resp := p.handle(cmd)
			if resp == nil {
				return
			}
			out, err := EncodeFrame(resp)
			if err != nil {
				p.t.Errorf("fake peer: encode: %v", err)
				return
			}
			writeMu.Lock()
			defer writeMu.Unlock()
			c.Write(out) // an error means the client went away
		}()
	}
}

// waitFor returns the first recorded frame with this request code.
func (p *fakePeer) waitFor(code int16, timeout time.Duration) captured {
	p.t.Helper()
	return p.waitForMatch(code, timeout, func(*Command) bool { return true })
}

// waitForMatch returns the first recorded request with this code for which
// match is true.
func (p *fakePeer) waitForMatch(code int16, timeout time.Duration, match func(*Command) bool) captured {
	p.t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		for _, f := range p.frames {
			if f.cmd.Code == code && !f.cmd.IsResponse() && match(f.cmd) {
				p.mu.Unlock()
				return f
			}
		}
		p.mu.Unlock()
		select {
		case <-p.notify:
		case <-deadline.C:
			p.t.Fatalf("no %s frame within %v", RequestCodeName(code), timeout)
		}
	}
}

func (p *fakePeer) all() []captured {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]captured(nil), p.frames...)
}

func (p *fakePeer) close() {
	err := p.ln.Close()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		p.t.Error(err)
	}
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// okResponse answers req with SUCCESS and the given ext and body.
func okResponse(req *Command, ext map[string]string, body []byte) *Command {
	r := NewResponse(req, RespSuccess, "")
	r.ExtFields = ext
	r.Body = body
	return r
}
