package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/internal/leakcheck"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

// result is one in-process runnelctl run.
type result struct {
	code           int
	stdout, stderr string
}

// onCluster starts an in-process cluster and returns it with the
// environment that points runnelctl at its name server.
func onCluster(t *testing.T, opts ...cluster.Option) (*cluster.Cluster, map[string]string) {
	t.Helper()
	cl := cluster.Start(t, opts...)
	return cl, map[string]string{"NAMESRV_ADDR": cl.NamesrvAddr()}
}

// ctlWith returns a function that runs runnelctl in-process with env and
// no stdin.
func ctlWith(t *testing.T, env map[string]string) func(args ...string) result {
	return func(args ...string) result { return runCLI(t, env, "", args...) }
}

// runCLI runs runnelctl in-process with the given environment.
func runCLI(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut, func(k string) string { return env[k] })
	return result{code, out.String(), errOut.String()}
}

// fakeNamesrv is a name server answering GET_BROKER_CLUSTER_INFO and
// GET_ALL_TOPIC_LIST_FROM_NAMESERVER with fixed bodies and counting
// requests.
type fakeNamesrv struct {
	srv   *remoting.Server
	calls chan int16
}

func startFakeNamesrv(t *testing.T, cluster, topics string) *fakeNamesrv {
	t.Helper()
	f := &fakeNamesrv{calls: make(chan int16, 100)}
	f.srv = clitest.Server(t, remoting.TransportStd, func(srv *remoting.Server) { srv.HandleDefault(f.answer(cluster, topics)) })
	return f
}

// answer is the fake's handler: cluster and topics its bodies.
func (f *fakeNamesrv) answer(cluster, topics string) remoting.Handler {
	return func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		f.calls <- req.Code
		resp := protocol.NewResponse(req, protocol.RespSuccess, "")
		switch req.Code {
		case protocol.ReqGetBrokerClusterInfo:
			resp.Body = []byte(cluster)
		case protocol.ReqGetAllTopicListFromNameServer:
			resp.Body = []byte(topics)
		case protocol.ReqGetRouteInfoByTopic:
			return protocol.NewResponse(req, protocol.RespTopicNotExist, "No topic route info in name server for the topic: "+req.ExtFields["topic"])
		default:
			return protocol.NewResponse(req, protocol.RespRequestCodeNotSupported, "no")
		}
		return resp
	}
}

const javaClusterInfo = `{"brokerAddrTable":{"broker-a":{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},"brokerName":"broker-a","cluster":"DefaultCluster"}},` +
	`"clusterAddrTable":{"DefaultCluster":["broker-a"]}}`
