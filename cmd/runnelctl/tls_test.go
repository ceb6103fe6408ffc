package main

import (
	"strings"
	"testing"

	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/remoting"
)

// --tls reaches a cluster that enforces TLS, verified with --tls-ca too;
// without it the command fails in one line that suggests --tls.
func TestTLSFlags(t *testing.T) {
	c := cluster.StartTLS(t, remoting.TLSEnforcing)
	nsAddr, caFile := c.NamesrvAddr, c.CAFile
	env := map[string]string{"NAMESRV_ADDR": nsAddr}
	if r := okRun(t, env, "", "--tls", "broker", "list"); !strings.Contains(r.stdout, "broker-a") {
		t.Fatalf("broker list over TLS: %+v", r)
	}
	okRun(t, env, "", "--tls", "--tls-ca", caFile, "topic", "create", "tls-topic", "--queues", "2")
	if r := okRun(t, env, "", "--tls", "--tls-ca", caFile, "send", "--topic", "tls-topic", "hello"); !strings.Contains(r.stdout, "SEND_OK") {
		t.Fatalf("send over verified TLS: %+v", r)
	}
	assertFailed(t, runCLI(t, env, "", "broker", "list"), "--tls")
	_, otherCA := cluster.Certificate(t, "other.pem")
	assertFailed(t, runCLI(t, env, "", "--tls", "--tls-ca", otherCA, "broker", "list"), "certificate signed by unknown authority")
	assertFailed(t, runCLI(t, env, "", "--tls-ca", caFile, "broker", "list"), "TLSCAFile is set but TLS is not")
}
