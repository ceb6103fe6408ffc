package main

import (
	"context"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/remoting"
)

// --tls consumes from a cluster that enforces TLS (verified with --tls-ca);
// without it the consumer fails to start.
func TestTLSFlag(t *testing.T) {
	c := cluster.StartTLS(t, remoting.TLSEnforcing)
	pcfg := clitest.ProducerConfig(c.NamesrvAddr, "consumer-tls-test", "tls-pg")
	pcfg.Client.TLS = true
	p := clitest.StartProducer(t, pcfg)
	for _, b := range []string{"one", "two", "three"} {
		if _, err := p.Send(context.Background(), &client.Message{Topic: "tls-topic", Body: []byte(b)}); err != nil {
			t.Fatalf("send over TLS: %v", err)
		}
	}
	ns := func(k string) string {
		if k == "NAMESRV_ADDR" {
			return c.NamesrvAddr
		}
		return ""
	}
	base := []string{"--topic", "tls-topic", "--from", "first", "--max", "3", "-o", "json", "--log-level", "error"}
	code, out, errOut := runInProcess(context.Background(), ns, append(base, "--tls", "--tls-ca", c.CAFile)...)
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, "three") {
		t.Fatalf("consume over TLS: exit %d, %q; stderr:\n%s", code, out, errOut)
	}
	if code, _, _ := runInProcess(context.Background(), ns, base...); code == 0 {
		t.Fatal("plain consumer against an enforcing cluster succeeded")
	}
	code, _, errOut = runInProcess(context.Background(), ns, append(base, "--tls-ca", c.CAFile)...)
	if code != 1 || !strings.Contains(errOut, "needs --tls") {
		t.Fatalf("--tls-ca without --tls: exit %d, %q", code, errOut)
	}
}
