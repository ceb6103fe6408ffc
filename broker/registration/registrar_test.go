package registration

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/topicconf"
)

// fakeBroker is the broker as a Registrar reads it: a topic table with
// the changes since the last take.
type fakeBroker struct {
	mu       sync.Mutex
	topics   map[string]topicconf.Config
	changed  map[string]topicconf.Config
	removed  bool
	version  topicconf.DataVersion
	writable bool
	perm     int
	id       int64
}

func newFakeBroker() *fakeBroker {
	return &fakeBroker{topics: map[string]topicconf.Config{}, changed: map[string]topicconf.Config{},
		writable: true, perm: topicconf.PermRead | topicconf.PermWrite}
}

func (f *fakeBroker) put(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	tc := topicconf.New(name)
	f.topics[name], f.changed[name] = tc, tc
	f.version = f.version.Next(time.Now().UnixMilli())
}

func (f *fakeBroker) Topics() (map[string]topicconf.Config, topicconf.DataVersion) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.topics), f.version
}

func (f *fakeBroker) TakeTopicChanges() (map[string]topicconf.Config, bool, topicconf.DataVersion) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, r := f.changed, f.removed
	f.changed, f.removed = map[string]topicconf.Config{}, false
	return c, r, f.version
}

func (f *fakeBroker) Writable() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writable
}

func (f *fakeBroker) Permission() int { return f.perm }
func (f *fakeBroker) ID() int64       { return f.id }

// registration is one REGISTER_BROKER a fake name server received.
type registration struct {
	id     int64
	topics []string
	perms  map[string]int
}

// fakeNamesrv records the registrations it receives.
type fakeNamesrv struct {
	srv *remoting.Server

	mu           sync.Mutex
	regs         []registration
	unregistered int
}

func startNamesrv(t *testing.T) *fakeNamesrv {
	t.Helper()
	ns := &fakeNamesrv{}
	srv, err := remoting.NewServer(remoting.ServerConfig{Addr: "127.0.0.1:0", Transport: remoting.TransportStd, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	srv.Handle(protocol.ReqRegisterBroker, func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		var h protocol.RegisterBrokerRequestHeader
		if err := h.Decode(req.Fields()); err != nil {
			return protocol.NewResponse(req, protocol.RespSystemError, err.Error())
		}
		body, err := protocol.DecodeRegisterBrokerBody(req.Body, h.Compressed)
		if err != nil {
			return protocol.NewResponse(req, protocol.RespSystemError, err.Error())
		}
		r := registration{id: h.BrokerID, perms: map[string]int{}}
		for name, tc := range body.TopicConfigSerializeWrapper.TopicConfigTable {
			r.topics = append(r.topics, name)
			r.perms[name] = tc.Perm
		}
		slices.Sort(r.topics)
		ns.mu.Lock()
		ns.regs = append(ns.regs, r)
		ns.mu.Unlock()
		return protocol.NewResponse(req, protocol.RespSuccess, "")
	})
	srv.Handle(protocol.ReqUnregisterBroker, func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		ns.mu.Lock()
		ns.unregistered++
		ns.mu.Unlock()
		return protocol.NewResponse(req, protocol.RespSuccess, "")
	})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ns.srv = srv
	return ns
}

func (ns *fakeNamesrv) registrations() []registration {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	return slices.Clone(ns.regs)
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newRegistrar(t *testing.T, b Broker, ns *fakeNamesrv) *Registrar {
	t.Helper()
	r := New(Config{NamesrvAddrs: []string{ns.srv.Addr()}, BrokerName: "b", ClusterName: "c",
		Interval: time.Hour, Logger: quiet(), Broker: b})
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// TestRegistersWholeThenChanges: Start sends the whole table; a change is
// registered alone (ChangesAndWait returns once it is); a store that
// stops taking writes registers every topic without write permission;
// Unregister tells the name server.
func TestRegistersWholeThenChanges(t *testing.T) {
	ns := startNamesrv(t)
	b := newFakeBroker()
	b.put("A")
	b.put("B")
	r := newRegistrar(t, b, ns)
	r.Start(netip.MustParseAddrPort("127.0.0.1:10911"))
	if regs := ns.registrations(); len(regs) != 1 || !slices.Equal(regs[0].topics, []string{"A", "B"}) {
		t.Fatalf("after Start: %+v", regs)
	}

	b.put("C")
	r.ChangesAndWait()
	regs := ns.registrations()
	if len(regs) != 2 || !slices.Equal(regs[1].topics, []string{"C"}) {
		t.Fatalf("after a change: %+v, want C alone", regs)
	}

	b.mu.Lock()
	b.writable = false
	b.mu.Unlock()
	r.Kick()
	testwait.Until(t, 10*time.Second, "a registration without write permission", func() error {
		regs := ns.registrations()
		last := regs[len(regs)-1]
		if len(regs) < 3 || len(last.topics) != 3 {
			return fmt.Errorf("registrations %+v", regs)
		}
		for name, perm := range last.perms {
			if topicconf.IsWriteable(perm) {
				return fmt.Errorf("%s registered writable: %d", name, perm)
			}
		}
		return nil
	})

	r.Stop()
	r.Unregister()
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.unregistered != 1 {
		t.Fatalf("%d unregistrations", ns.unregistered)
	}
}

// TestNameServerBackGetsTheWholeTable: a name server whose connection
// closed may have restarted empty, so the next round gives it every
// topic, not only the changed ones.
func TestNameServerBackGetsTheWholeTable(t *testing.T) {
	ns := startNamesrv(t)
	b := newFakeBroker()
	b.put("A")
	r := newRegistrar(t, b, ns)
	r.Start(netip.MustParseAddrPort("127.0.0.1:10911"))
	for _, c := range ns.srv.Conns() {
		_ = c.Close()
	}
	testwait.Until(t, 10*time.Second, "a whole registration after the connection closed", func() error {
		regs := ns.registrations()
		if len(regs) < 2 || !slices.Equal(regs[len(regs)-1].topics, []string{"A"}) {
			return fmt.Errorf("registrations %+v", regs)
		}
		return nil
	})
	b.put("B")
	r.ChangesAndWait()
	regs := ns.registrations()
	if last := regs[len(regs)-1]; !slices.Equal(last.topics, []string{"B"}) {
		t.Fatalf("a change after the whole table: %+v", last)
	}
}
