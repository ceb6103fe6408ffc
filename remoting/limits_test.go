package remoting

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/runnelmq/runnel/internal/testwait"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// rawJSONFrame is a whole frame (length prefix included) with header as its
// JSON header and no body.
func rawJSONFrame(header string) []byte {
	f := binary.BigEndian.AppendUint32(nil, uint32(4+len(header)))
	f = binary.BigEndian.AppendUint32(f, uint32(len(header)))
	return append(f, header...)
}

// millionExtFields is a request header of a million ext fields (14 MB, under
// the 16 MiB frame limit), in the official Go client's field order.
func millionExtFields(opaque int32, flag int32) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"code":%d,"language":"GO","version":317,"opaque":%d,"flag":%d,"remark":"","extFields":{`, codeEcho, opaque, flag)
	for i := range 1_000_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%06d":"v"`, i)
	}
	b.WriteString("}}")
	return rawJSONFrame(b.String())
}

// hugeValue is a request header with one 12 MiB ext value, in Java's field
// order (fastjson sorts them: the opaque comes after the extFields).
func hugeValue(opaque int32) []byte {
	return rawJSONFrame(fmt.Sprintf(`{"code":%d,"extFields":{"topic":"%s"},"flag":0,"language":"JAVA","opaque":%d,"serializeTypeCurrentRPC":"JSON","version":453}`,
		codeEcho, strings.Repeat("t", 12<<20), opaque))
}

// allocatedDuring returns the bytes and objects the process allocated
// while fn ran.
func allocatedDuring(fn func()) (bytes, objects uint64) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs
}

// A header of a million ext fields and one with a 12 MiB value are each
// answered with a clear refusal, on a connection that stays usable, and the
// server does not allocate what they hold.
func TestHostileHeadersAreRefused(t *testing.T) {
	million, huge := millionExtFields(101, 0), hugeValue(102)
	manyFields := protocol.NewRequest(codeEcho, nil, nil)
	for i := range 2000 { // 2000 fields in 30 KB: within the header size
		manyFields.SetExt(fmt.Sprint("k", i), "v")
	}
	manyFields.Opaque = 103
	forEachTransport(t, func(t *testing.T, tr string) {
		s := startServer(t, tr, nil, map[int16]Handler{codeEcho: echo})
		nc := rawConn(t, s.Addr())
		for _, tc := range []struct {
			name   string
			frame  []byte
			opaque int32
			remark string
		}{
			{"million ext fields", million, 101, "exceeds the limit of 262144 bytes (maxHeaderSize)"},
			{"huge value", huge, 102, "exceeds the limit of 262144 bytes (maxHeaderSize)"},
			{"2000 ext fields", mustFrame(t, manyFields), 103, "request header has more than 1024 ext fields (maxExtFields)"},
		} {
			var resp *protocol.Command
			alloc, objects := allocatedDuring(func() {
				if _, err := nc.Write(tc.frame); err != nil {
					t.Fatal(err)
				}
				var err error
				if resp, err = readFrame(t, nc); err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
			})
			if resp.Opaque != tc.opaque || resp.Code != protocol.RespSystemError || !strings.Contains(resp.Remark, tc.remark) {
				t.Fatalf("%s answered %v, want SYSTEM_ERROR %q", tc.name, resp, tc.remark)
			}
			// Decoded, the million fields would be two million strings.
			if objects > 20_000 {
				t.Errorf("%s: %d objects allocated", tc.name, objects)
			}
			// Within the header size a frame is read whole, and its ext
			// fields up to the limit are kept. netpoll's poller buffers
			// what arrives between two reads in nodes of its own (pooled,
			// growing to 8 MiB), whatever we do with the bytes: only the
			// std transport's reads are ours alone.
			if limit := max(uint64(len(tc.frame)/4), 1<<20); tr == TransportStd && alloc > limit {
				t.Errorf("%s: %d bytes allocated for a %d-byte frame", tc.name, alloc, len(tc.frame))
			}
		}
		// The connection still serves.
		req := protocol.NewRequest(codeEcho, nil, []byte("still here"))
		if _, err := nc.Write(mustFrame(t, req)); err != nil {
			t.Fatal(err)
		}
		if resp, err := readFrame(t, nc); err != nil || string(resp.Body) != "still here" {
			t.Fatalf("after the refusals: %v %v", resp, err)
		}
	})
}

// Java answers a code outside its int16 request codes
// REQUEST_CODE_NOT_SUPPORTED rather than dropping the connection.
func TestRequestCodeOutsideInt16(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		s := startServer(t, tr, nil, map[int16]Handler{codeEcho: echo})
		nc := rawConn(t, s.Addr())
		frame := rawJSONFrame(`{"code":70000,"language":"JAVA","version":453,"opaque":9,"flag":0,"extFields":{"topic":"T"}}`)
		oneway := rawJSONFrame(`{"code":70000,"opaque":10,"flag":2}`)
		next := protocol.NewRequest(codeEcho, nil, []byte("next"))
		if _, err := nc.Write(append(append(frame, oneway...), mustFrame(t, next)...)); err != nil {
			t.Fatal(err)
		}
		resp, err := readFrame(t, nc)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Opaque != 9 || resp.Code != protocol.RespRequestCodeNotSupported || resp.Remark != "request code 70000 not supported" {
			t.Fatalf("code 70000 answered %v", resp)
		}
		// The oneway one got no answer; the next request did.
		if resp, err := readFrame(t, nc); err != nil || resp.Opaque != next.Opaque {
			t.Fatalf("after code 70000: %v %v", resp, err)
		}
	})
}

// Refusals keep the oneway rule, and a frame whose opaque cannot be found
// closes the connection, logged with the reason.
func TestOversizedHeaderOnewayAndUnanswerable(t *testing.T) {
	var logs logBuffer
	s := startServer(t, TransportNetpoll, func(c *ServerConfig) {
		c.MaxHeaderSize = 4 << 10
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	}, map[int16]Handler{codeEcho: echo})
	nc := rawConn(t, s.Addr())
	big := strings.Repeat("x", 8<<10)
	oneway := rawJSONFrame(fmt.Sprintf(`{"code":%d,"opaque":1,"flag":2,"extFields":{"v":"%s"}}`, codeEcho, big))
	next := protocol.NewRequest(codeEcho, nil, []byte("next"))
	if _, err := nc.Write(append(oneway, mustFrame(t, next)...)); err != nil {
		t.Fatal(err)
	}
	if resp, err := readFrame(t, nc); err != nil || resp.Opaque != next.Opaque {
		t.Fatalf("first answer %v %v, want the one to opaque %d", resp, err, next.Opaque)
	}
	hidden := rawJSONFrame(fmt.Sprintf(`{"code":%d,"remark":"%s","opaque":3,"extFields":{"v":"%s"}}`, codeEcho, big, big))
	if _, err := nc.Write(hidden); err != nil {
		t.Fatal(err)
	}
	waitClosedByServer(t, nc)
	testwait.For(t, testwait.Default, "the close logged", func() bool { return strings.Contains(logs.String(), "no opaque to answer it by") })
}

// A client that reaches something other than a RocketMQ server (an HTTP
// server answering the frame it cannot parse) says so.
func TestClientToNonRocketMQServer(t *testing.T) {
	addr := acceptOne(t, func(nc net.Conn) {
		nc.Read(make([]byte, 512))
		io.WriteString(nc, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	})
	cl := newClient(t, nil)
	_, err := cl.Invoke(context.Background(), addr, protocol.NewRequest(protocol.ReqGetRouteInfoByTopic, nil, nil))
	if !errors.Is(err, ErrNotRocketMQ) || !errors.Is(err, ErrConnClosed) {
		t.Fatalf("call to an HTTP server: %v, want ErrNotRocketMQ", err)
	}
	if msg := err.Error(); !strings.Contains(msg, addr+` is not a RocketMQ server: it sent "HTTP/1.1 400 Bad"`) || strings.Contains(msg, "1213486160") {
		t.Fatalf("error reads %q", msg)
	}
}

func TestServerLogsNonRocketMQClient(t *testing.T) {
	var logs logBuffer
	s := startServer(t, TransportStd, func(c *ServerConfig) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) }, nil)
	nc := rawConn(t, s.Addr())
	io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	waitClosedByServer(t, nc)
	testwait.For(t, testwait.Default, "the close logged", func() bool {
		return strings.Contains(logs.String(), nc.LocalAddr().String()+` is not a RocketMQ client: it sent \"GET / HTTP/1.1\\r\\n\"`)
	})
}

// BenchmarkHostileHeaders measures the server's memory while eight
// connections at once each send a header of a million ext fields (14 MB)
// and read the refusal: B/op is what the process allocated per round of
// eight (the client side only writes prebuilt frames and reads small
// answers), heap-growth-MiB the most the heap in use grew past what it was
// before the first round (the prebuilt frames included), seen after a
// round.
//
//	go test -run '^$' -bench HostileHeaders -benchtime 20x ./remoting
func BenchmarkHostileHeaders(b *testing.B) {
	const conns = 8
	for _, tr := range transports {
		b.Run("transport="+tr, func(b *testing.B) {
			s := startServer(b, tr, nil, map[int16]Handler{codeEcho: echo})
			frames := make([][]byte, conns)
			ncs := make([]net.Conn, conns)
			for i := range conns {
				frames[i] = millionExtFields(int32(i+1), 0)
				nc, err := net.Dial("tcp", s.Addr())
				if err != nil {
					b.Fatal(err)
				}
				defer nc.Close()
				ncs[i] = nc
			}
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			base, peak := ms.HeapInuse, ms.HeapInuse
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				var wg sync.WaitGroup
				for i := range conns {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if _, err := ncs[i].Write(frames[i]); err != nil {
							b.Error(err)
							return
						}
						var pre [4]byte
						if _, err := io.ReadFull(ncs[i], pre[:]); err != nil {
							b.Error(err)
							return
						}
						n, _ := protocol.FrameLength(pre[:], protocol.MaxFrameSize)
						if _, err := io.CopyN(io.Discard, ncs[i], int64(n)); err != nil {
							b.Error(err)
						}
					}()
				}
				wg.Wait()
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
			}
			b.ReportMetric(float64(peak-base)/(1<<20), "heap-growth-MiB")
		})
	}
}

// A response the client cannot take (a code outside int16) fails its call
// with the reason and leaves the connection to the others.
func TestClientUnreadableResponse(t *testing.T) {
	addr := acceptOne(t, func(nc net.Conn) {
		for code := 70000; ; code = int(protocol.RespSuccess) {
			req, err := readFrame(t, nc)
			if err != nil {
				return
			}
			io.WriteString(nc, string(rawJSONFrame(fmt.Sprintf(`{"code":%d,"flag":1,"opaque":%d}`, code, req.Opaque))))
		}
	})
	cl := newClient(t, nil)
	_, err := cl.Invoke(context.Background(), addr, protocol.NewRequest(codeEcho, nil, nil))
	if !errors.Is(err, protocol.ErrCodeOutOfRange) || !strings.Contains(err.Error(), "unreadable response from "+addr) {
		t.Fatalf("response code 70000: %v", err)
	}
	if resp, err := cl.Invoke(context.Background(), addr, protocol.NewRequest(codeEcho, nil, nil)); err != nil || resp.Code != protocol.RespSuccess {
		t.Fatalf("the next call on the connection: %v %v", resp, err)
	}
	cl.Close() // ends the fake server's read
}

// acceptOne listens on a free loopback port and serves the first
// connection with serve in a goroutine, closing it after; the test's
// cleanup closes the listener and waits for the goroutine. It returns the
// address.
func acceptOne(t *testing.T, serve func(nc net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		serve(nc)
	}()
	return ln.Addr().String()
}
