package remoting

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// captureTransport keeps what each write was given, and a copy of the
// bytes (the Conn reuses its write buffer).
type captureTransport struct {
	writes [][][]byte
	bytes  [][]byte
}

func (t *captureTransport) write(bufs [][]byte) error {
	t.writes = append(t.writes, append([][]byte(nil), bufs...))
	t.bytes = append(t.bytes, bytes.Join(bufs, nil))
	return nil
}
func (t *captureTransport) close() error { return nil }

func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// A large response body (a pull's answer) goes to the transport as a piece
// of its own, the body itself and not a copy, and the pieces add up to the
// frame RocketMQ expects; a request's body and a small answer's are copied
// into the write buffer, as their senders may reuse them once send returns.
func TestLargeResponseBodyIsWrittenInPlace(t *testing.T) {
	tr := &captureTransport{}
	c := newConn(&poolOwner{}, tr, "peer", "local", 1<<24, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	body := bytes.Repeat([]byte("m"), 40<<10)
	small := bytes.Repeat([]byte("s"), 100)
	req := protocol.NewRequest(protocol.ReqPullMessage, nil, nil)
	big := protocol.NewResponse(req, protocol.RespSuccess, "")
	big.ExtFields = map[string]string{"nextBeginOffset": "32"}
	big.Body = body
	send := protocol.NewRequest(protocol.ReqSendMessage, nil, body)
	for _, cmd := range []*protocol.Command{big, send} {
		if err := c.send(cmd, false); err != nil {
			t.Fatal(err)
		}
	}
	little := protocol.NewResponse(req, protocol.RespSuccess, "")
	little.Body = small
	if err := c.send(little, false); err != nil {
		t.Fatal(err)
	}
	if len(tr.writes) != 3 {
		t.Fatalf("%d writes, want 3", len(tr.writes))
	}
	for i, want := range []struct {
		cmd      *protocol.Command
		borrowed bool
	}{{big, true}, {send, false}, {little, false}} {
		pieces := tr.writes[i]
		borrowed := false
		for _, p := range pieces {
			if sameBytes(p, want.cmd.Body) {
				borrowed = true
			}
		}
		if borrowed != want.borrowed {
			t.Errorf("write %d: body written in place %v, want %v (%d pieces)", i, borrowed, want.borrowed, len(pieces))
		}
		frame, err := protocol.EncodeFrame(want.cmd)
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.bytes[i]; !bytes.Equal(got, frame) {
			t.Errorf("write %d: %d bytes on the wire differ from the %d-byte frame", i, len(got), len(frame))
		}
	}
}

// Frames queued while a write is in progress go out together, borrowed
// bodies in their places between the others' bytes.
func TestWriteVectorKeepsFrameOrder(t *testing.T) {
	out := []byte("aaBBBcc")
	b1, b2 := []byte("<1>"), []byte("<2>")
	vec := writeVector(nil, out, []borrowedBody{{at: 2, body: b1}, {at: 5, body: b2}, {at: 7, body: b1}})
	if got := string(bytes.Join(vec, nil)); got != "aa<1>BBB<2>cc<1>" {
		t.Fatalf("vector %q", got)
	}
	if len(vec) != 6 {
		t.Fatalf("%d pieces, want 6 (no empty ones)", len(vec))
	}
}

// gateTransport's first write blocks until release is closed, as a write
// to a slow peer does (later writes wait behind it in the Once); every
// write's bytes are kept.
type gateTransport struct {
	entered, release chan struct{}
	gate             sync.Once
	mu               sync.Mutex
	frames           [][]byte
}

func (t *gateTransport) write(bufs [][]byte) error {
	t.gate.Do(func() {
		close(t.entered)
		<-t.release
	})
	t.mu.Lock()
	t.frames = append(t.frames, bytes.Join(bufs, nil))
	t.mu.Unlock()
	return nil
}
func (t *gateTransport) close() error { return nil }

// An answer queued behind another goroutine's write in progress, as a
// draining broker's answer to a held pull can be, still reaches the peer
// when the server closes: Close lets the write in progress finish and the
// writer send what queued behind it before it closes the connection.
// (Closing at once dropped it although Reply had returned nil.)
func TestCloseWritesAnswersQueuedBehindAWrite(t *testing.T) {
	s := startServer(t, TransportStd, nil, nil)
	gt := &gateTransport{entered: make(chan struct{}), release: make(chan struct{})}
	c := s.addConn(gt, "peer", "local")
	if c == nil {
		t.Fatal("server refused the connection")
	}
	req := protocol.NewRequest(protocol.ReqPullMessage, nil, nil)
	first, queued := protocol.NewResponse(req, protocol.RespSuccess, "first"), protocol.NewResponse(req, protocol.RespPullNotFound, "queued")
	wrote := make(chan error, 1)
	go func() { wrote <- c.Reply(first) }()
	<-gt.entered
	if err := c.Reply(queued); err != nil {
		t.Fatalf("queued reply: %v", err)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-c.closed:
		t.Error("the connection closed while a write was in progress")
	case <-time.After(100 * time.Millisecond):
	}
	close(gt.release)
	if err := <-wrote; err != nil {
		t.Fatalf("first reply: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	gt.mu.Lock()
	defer gt.mu.Unlock()
	var remarks []string
	for _, f := range gt.frames {
		cmd, err := protocol.DecodeFrame(f[4:])
		if err != nil {
			t.Fatal(err)
		}
		remarks = append(remarks, cmd.Remark)
	}
	if fmt.Sprint(remarks) != "[first queued]" {
		t.Fatalf("written %v, want [first queued]", remarks)
	}
}

// A client's connection keeps a write buffer of up to clientKeptWriteBuf
// between writes, where a server's drops one over maxKeptWriteBuf: 16
// senders of 32-message batches queue about 530 KB behind one write, and
// a dropped buffer was regrown by appends on most writes.
func TestClientKeepsItsLargerWriteBuffer(t *testing.T) {
	s := startServer(t, TransportStd, nil, map[int16]Handler{protocol.ReqSendBatchMessage: func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
		return protocol.NewResponse(req, protocol.RespSuccess, "")
	}})
	cl := newClient(t, nil)
	body := make([]byte, 600<<10)
	if _, err := cl.Invoke(context.Background(), s.Addr(), protocol.NewRequest(protocol.ReqSendBatchMessage, nil, body)); err != nil {
		t.Fatal(err)
	}
	c, err := cl.Conn(context.Background(), s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c.wmu.Lock()
	kept := cap(c.wmu.spare)
	c.wmu.Unlock()
	if kept < len(body) {
		t.Fatalf("the client kept a write buffer of %d bytes after writing %d", kept, len(body))
	}

	srv := newConn(&poolOwner{}, &captureTransport{}, "peer", "local", 1<<24, 0, quietLogger())
	if err := srv.send(protocol.NewRequest(protocol.ReqCheckTransactionState, nil, body), false); err != nil {
		t.Fatal(err)
	}
	if kept := cap(srv.wmu.spare); kept != 0 {
		t.Fatalf("a server's connection kept a write buffer of %d bytes", kept)
	}
}
