package client_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/integration/cluster"
)

// TestFailoverAsAUserWritesIt is the first failover test a user writes
// (issue 38): a config literal with only the name server set, so the retry
// count is the zero value and must take its default of two retries; the
// master killed after a few sends (so the producer holds the topic's real
// route, naming the old master); the next Send must land on the new
// master. Before the fix it failed with "connection refused" to the old
// master although the client logged that the master moved: the zero retry
// count stayed zero, so the attempt that found the new master never came.
func TestFailoverAsAUserWritesIt(t *testing.T) {
	c := cluster.Start(t, cluster.Group(3))
	master := c.Leader() // waits for the group's first master
	p, err := client.NewProducer(client.ProducerConfig{
		Client: client.ClientConfig{NameServerAddrs: []string{c.NamesrvAddr()}, InstanceName: t.Name()},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(ctx)
	for i := range 10 {
		if _, err := p.Send(ctx, &client.Message{Topic: "orders", Body: fmt.Appendf(nil, "before %d", i)}); err != nil {
			t.Fatal(err)
		}
	}

	c.KillBroker(master)
	c.Leader(master) // waits for another node to become master

	res, err := p.Send(ctx, &client.Message{Topic: "orders", Body: []byte("after")})
	if err != nil {
		t.Fatalf("send after the failover: %v", err)
	}
	if res.Status != client.SendOK {
		t.Fatalf("send after the failover: %v", res.Status)
	}
}
