// Command healthcheck probes a Runnel (or RocketMQ) name server or broker:
// it sends one remoting request and exits 0 when any well-formed answer
// comes back in time, 1 otherwise. The FROM-scratch images have no shell or
// curl, so their Docker healthchecks run this.
//
//	healthcheck [--timeout 2s] 127.0.0.1:9876
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/remoting/protocol"
)

func main() {
	if err := newCommand(os.Stdout, os.Stderr).Execute(); err != nil {
		os.Exit(1)
	}
}

func newCommand(stdout, stderr io.Writer) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:          "healthcheck ADDR",
		Short:        "Exit 0 when a name server or broker at ADDR answers a request",
		Example:      "  healthcheck 127.0.0.1:9876\n  healthcheck --timeout 500ms 127.0.0.1:10911",
		Args:         cobra.ExactArgs(1),
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return probe(cmd.Context(), args[0], timeout, stdout)
		},
	}
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Second, "how long to wait for the answer")
	return cmd
}

// probe asks for the cluster info: a name server answers it, a broker
// answers "not supported" or with its own data; either proves the server
// reads, dispatches and writes frames.
func probe(ctx context.Context, addr string, timeout time.Duration, out io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := exchange(ctx, addr, protocol.NewRequest(protocol.ReqGetBrokerClusterInfo, nil, nil))
	if err != nil {
		return fmt.Errorf("healthcheck: %s: %w", addr, err)
	}
	fmt.Fprintf(out, "%s: up (answered code %d)\n", addr, resp.Code)
	return nil
}

// exchange sends req on a connection of its own and reads one frame back.
// A probe makes one call and exits, so it speaks the frame format
// (protocol's) over a plain socket instead of linking remoting's
// transport, netpoll included, into every image.
func exchange(ctx context.Context, addr string, req *protocol.Command) (*protocol.Command, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	frame, err := protocol.EncodeFrame(req)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Write(frame); err != nil {
		return nil, err
	}
	answer, err := protocol.ReadFrame(conn, protocol.MaxFrameSize)
	if err != nil {
		return nil, err
	}
	resp, err := protocol.DecodeFrame(answer)
	if err != nil {
		return nil, err
	}
	if resp.Opaque != req.Opaque || !resp.IsResponse() {
		return nil, fmt.Errorf("answer %d is not the response to request %d", resp.Opaque, req.Opaque)
	}
	return resp, nil
}
