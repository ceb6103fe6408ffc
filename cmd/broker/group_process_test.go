package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/namesrv"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// freePorts returns n ports free on 127.0.0.1 now.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var out []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		_ = l.Close()
	}
	return out
}

// Three broker processes from DLedger-style broker.conf files, one group,
// under a producer (our client). kill -9 of the master: the name server
// lists another master within 3 s; the killed node restarts from its store
// and rejoins as a slave. SIGSTOP of the master for 10 s, then SIGCONT:
// afterwards exactly one node says it is master. Nothing acknowledged is
// missing from the group's store.
func TestProcessGroupFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three broker processes for about 30 s")
	}
	bin := buildBinary(t)
	nscfg := namesrv.DefaultConfig()
	nscfg.ListenAddr = "127.0.0.1:0"
	// netpoll's poller goroutines outlive the server (goleak); std's do not.
	nscfg.Transport = "std"
	nscfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	ns, err := namesrv.New(nscfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	defer ns.Close()

	ports := freePorts(t, 6) // client port, raft port per node
	var peers []string
	for i := range 3 {
		peers = append(peers, fmt.Sprintf("n%d-127.0.0.1:%d", i, ports[3+i]))
	}
	dir := t.TempDir()
	confs := make([]string, 3)
	addrs := make([]string, 3)
	for i := range 3 {
		addrs[i] = fmt.Sprintf("127.0.0.1:%d", ports[i])
		confs[i] = filepath.Join(dir, fmt.Sprintf("broker-n%d.conf", i))
		conf := strings.Join([]string{
			"brokerClusterName=RaftCluster",
			"brokerName=RaftNode00",
			"brokerIP1=127.0.0.1",
			fmt.Sprintf("listenPort=%d", ports[i]),
			"namesrvAddr=" + ns.Addr(),
			"storePathRootDir=" + filepath.Join(dir, fmt.Sprintf("n%d", i)),
			"enableDLegerCommitLog=true",
			"dLegerGroup=RaftNode00",
			"dLegerPeers=" + strings.Join(peers, ";"),
			fmt.Sprintf("dLegerSelfId=n%d", i),
		}, "\n") + "\n"
		if err := os.WriteFile(confs[i], []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	procs := make([]*proc, 3)
	start := func(i int) { procs[i] = startProc(t, bin, "-c", confs[i], "--log-level", "warn") }
	for i := range 3 {
		start(i)
	}
	master := func() string {
		return ns.Table().ClusterInfo().BrokerAddrTable["RaftNode00"].BrokerAddrs[protocol.MasterID]
	}
	index := func(addr string) int {
		for i, a := range addrs {
			if a == addr {
				return i
			}
		}
		return -1
	}
	testwait.For(t, 20*time.Second, "a master listed", func() bool { return master() != "" })

	ccfg := client.DefaultClientConfig()
	ccfg.NameServerAddrs = []string{ns.Addr()}
	ccfg.InstanceName = fmt.Sprintf("group-proc-%d", os.Getpid())
	ccfg.RouteRefreshInterval = time.Second
	ccfg.Logger = nscfg.Logger
	pcfg := client.DefaultProducerConfig()
	pcfg.Client, pcfg.Group = ccfg, "group-proc-pg"
	p, err := client.NewProducer(pcfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Shutdown(context.Background()) }()
	var mu sync.Mutex
	var acked []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			body := fmt.Sprintf("m-%06d", i)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			res, err := p.Send(ctx, &client.Message{Topic: "RaftTopic", Body: []byte(body)})
			cancel()
			if err == nil && res.Status == client.SendOK {
				mu.Lock()
				acked = append(acked, body)
				mu.Unlock()
			} else {
				time.Sleep(20 * time.Millisecond) // pace sends while there is no master
			}
		}
	}()
	halt := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer halt()
	ackedN := func() int { mu.Lock(); defer mu.Unlock(); return len(acked) }
	waitMore := func(n int) {
		t.Helper()
		want := ackedN() + n
		testwait.For(t, 30*time.Second, fmt.Sprintf("%d sends acknowledged", want), func() bool { return ackedN() >= want })
	}
	waitMore(50)

	// kill -9 of the master.
	old := master()
	oi := index(old)
	killed := time.Now()
	procs[oi].kill(t)
	testwait.For(t, 10*time.Second, "another master listed", func() bool { m := master(); return m != "" && m != old })
	if d := time.Since(killed); d > 3*time.Second {
		t.Errorf("a new master was listed %v after the kill, want within 3 s", d)
	} else {
		t.Logf("new master listed %v after kill -9", d.Round(time.Millisecond))
	}
	waitMore(50)

	// The killed node restarts from its store and rejoins as a slave.
	start(oi)
	testwait.Until(t, 20*time.Second, "the restarted node listed as a slave", func() error {
		for id, a := range ns.Table().ClusterInfo().BrokerAddrTable["RaftNode00"].BrokerAddrs {
			if a == old && id != protocol.MasterID {
				return nil
			}
		}
		return fmt.Errorf("listed %v", ns.Table().ClusterInfo().BrokerAddrTable["RaftNode00"].BrokerAddrs)
	})
	waitMore(50)

	// SIGSTOP of the master for 10 s, then SIGCONT.
	frozen := index(master())
	if err := procs[frozen].cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Second) // the fault's length, not a wait for an event
	if err := procs[frozen].cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	acfg := admin.DefaultConfig()
	acfg.NamesrvAddrs = []string{ns.Addr()}
	acfg.Logger = nscfg.Logger
	adm, err := admin.New(acfg)
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	testwait.Until(t, 20*time.Second, "exactly one node saying it is master", func() error {
		var masters []string
		for _, a := range addrs {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			kv, err := adm.BrokerRuntimeInfo(ctx, admin.Node{Addr: a})
			cancel()
			if err != nil {
				return err
			}
			if kv[broker.InfoBrokerRole] == "MASTER" {
				masters = append(masters, a)
			}
		}
		if len(masters) != 1 || masters[0] != master() {
			return fmt.Errorf("masters %v, listed %s", masters, master())
		}
		return nil
	})
	waitMore(50)
	halt()

	// Every acknowledged message is in the group's store (read from the
	// master).
	m := master()
	count := realTopicBodies(t, func(req *protocol.Command) *protocol.Command { return call(t, m, req) }, "RaftTopic", 4)
	mu.Lock()
	defer mu.Unlock()
	missing := 0
	for _, b := range acked {
		if count[b] == 0 {
			if missing++; missing <= 5 {
				t.Errorf("%s acknowledged, not stored", b)
			}
		}
	}
	t.Logf("%d acknowledged, %d missing, %d stored", len(acked), missing, len(count))
}
