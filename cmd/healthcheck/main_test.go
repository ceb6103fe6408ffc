package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestProbeUpAndDown(t *testing.T) {
	srv := clitest.Server(t, remoting.TransportStd, func(srv *remoting.Server) {
		srv.Handle(protocol.ReqGetBrokerClusterInfo, func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
			return protocol.NewResponse(req, protocol.RespSuccess, "")
		})
	})

	var out bytes.Buffer
	cmd := newCommand(&out, &out)
	cmd.SetArgs([]string{srv.Addr()})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("probe of a live server failed: %v (%s)", err, out.String())
	}
	if !strings.Contains(out.String(), "up") {
		t.Fatalf("output %q", out.String())
	}

	// A port nobody listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	out.Reset()
	cmd = newCommand(&out, &out)
	cmd.SetArgs([]string{"--timeout", "500ms", dead})
	start := time.Now()
	if err := cmd.Execute(); err == nil {
		t.Fatal("probe of a dead address succeeded")
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("probe did not honour its timeout")
	}
}

// A server on the default transport (netpoll, as in the images) answers
// the probe; one that accepts and never answers fails it within the
// timeout.
func TestProbeNetpollAndSilentServer(t *testing.T) {
	srv := clitest.Server(t, remoting.TransportNetpoll, func(*remoting.Server) {})
	var out bytes.Buffer
	cmd := newCommand(&out, &out)
	cmd.SetArgs([]string{srv.Addr()})
	// No handler: the server answers "not supported", which proves it up.
	if err := cmd.Execute(); err != nil || !strings.Contains(out.String(), "up (answered code") {
		t.Fatalf("probe of a netpoll server: %v (%s)", err, out.String())
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- c
		}
	}()
	out.Reset()
	cmd = newCommand(&out, &out)
	cmd.SetArgs([]string{"--timeout", "300ms", ln.Addr().String()})
	start := time.Now()
	if err := cmd.Execute(); err == nil {
		t.Fatal("probe of a server that never answers succeeded")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("probe of a silent server did not honour its timeout")
	}
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the silent server saw no connection")
	}
}
