package remoting

import (
	"context"
	"errors"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// A Responder sets the opaque itself, answers once, sends nothing for a
// oneway request and nothing, without failing loudly, to a closed
// connection; with interceptors and without.
func TestResponder(t *testing.T) {
	for _, withInterceptors := range []bool{false, true} {
		forEachTransport(t, func(t *testing.T, tr string) {
			parked := make(chan *Responder, 4)
			s := startServer(t, tr, func(c *ServerConfig) {
				if withInterceptors {
					c.Interceptors = []Interceptor{{Request: func(context.Context, *Conn, *protocol.Command) *protocol.Command { return nil }}}
				}
			}, map[int16]Handler{
				codeDefer: func(ctx context.Context, c *Conn, req *protocol.Command) *protocol.Command {
					parked <- c.Defer(ctx, req)
					return nil
				},
				codeEcho: echo,
			})
			nc := rawConn(t, s.Addr())
			oneway := protocol.NewRequest(codeDefer, nil, nil)
			oneway.Flag = protocol.FlagOneway
			held := protocol.NewRequest(codeDefer, nil, nil)
			if _, err := nc.Write(append(mustFrame(t, oneway), mustFrame(t, held)...)); err != nil {
				t.Fatal(err)
			}
			// Frames are dispatched in order, but handlers run concurrently.
			rs := []*Responder{<-parked, <-parked}
			if rs[0].Oneway() == rs[1].Oneway() {
				t.Fatal("want one oneway responder and one not")
			}
			if rs[1].Oneway() {
				rs[0], rs[1] = rs[1], rs[0]
			}
			// No opaque set by the caller: the Responder owns it.
			if err := rs[0].Respond(&protocol.Command{Code: protocol.RespSuccess, Remark: "to oneway"}); err != nil {
				t.Fatalf("Respond to a oneway request: %v", err)
			}
			if err := rs[1].Respond(&protocol.Command{Code: protocol.RespSuccess, Remark: "first"}); err != nil {
				t.Fatal(err)
			}
			if err := rs[1].Respond(&protocol.Command{Code: protocol.RespSuccess, Remark: "second"}); !errors.Is(err, ErrAnswered) {
				t.Fatalf("second Respond: %v, want ErrAnswered", err)
			}
			last := protocol.NewRequest(codeEcho, nil, []byte("last"))
			if _, err := nc.Write(mustFrame(t, last)); err != nil {
				t.Fatal(err)
			}
			for _, want := range []struct {
				opaque int32
				remark string
			}{{held.Opaque, "first"}, {last.Opaque, ""}} {
				resp, err := readFrame(t, nc)
				if err != nil {
					t.Fatal(err)
				}
				if resp.Opaque != want.opaque || resp.Remark != want.remark || !resp.IsResponse() {
					t.Fatalf("answer %v, want opaque %d remark %q (nothing for the oneway request, one answer only)", resp, want.opaque, want.remark)
				}
			}

			// A request held while its peer goes away.
			held2 := protocol.NewRequest(codeDefer, nil, nil)
			if _, err := nc.Write(mustFrame(t, held2)); err != nil {
				t.Fatal(err)
			}
			r := <-parked
			nc.Close()
			<-r.Conn().Closed()
			if err := r.Respond(protocol.NewResponse(held2, protocol.RespSuccess, "")); !errors.Is(err, ErrConnClosed) {
				t.Fatalf("Respond on a closed connection: %v, want ErrConnClosed", err)
			}
		})
	}
}

func TestConnPeerLanguageAndVersion(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr string) {
		s := startServer(t, tr, nil, map[int16]Handler{codeEcho: echo})
		cl := newClient(t, nil)
		if _, err := cl.Invoke(context.Background(), s.Addr(), protocol.NewRequest(codeEcho, nil, nil)); err != nil {
			t.Fatal(err)
		}
		nc := rawConn(t, s.Addr())
		java := protocol.NewRequest(codeEcho, nil, nil)
		java.Language, java.Version = "JAVA", 453
		if _, err := nc.Write(mustFrame(t, java)); err != nil {
			t.Fatal(err)
		}
		if _, err := readFrame(t, nc); err != nil {
			t.Fatal(err)
		}
		got := map[string]int16{}
		for _, c := range s.Conns() {
			got[c.Language()] = c.Version()
			if c.Done() != c.Closed() {
				t.Fatal("Done is not Closed")
			}
		}
		if len(got) != 2 || got["GO"] != protocol.Version || got["JAVA"] != 453 {
			t.Fatalf("connections' language -> version %v, want GO %d and JAVA 453", got, protocol.Version)
		}
	})
}
