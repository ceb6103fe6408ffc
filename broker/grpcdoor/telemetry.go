package grpcdoor

import (
	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// telemetryQueue bounds the commands waiting to be written to one
// client's stream; a client that reads none of them loses the newest.
const telemetryQueue = 64

// telemetry is one Telemetry stream's way out: commands are queued and
// written by the stream's own writer, so the core's calls (a transaction
// check) never wait for a slow client.
type telemetry struct {
	out  chan *v2.TelemetryCommand
	done chan struct{} // closed when the stream's handler ends
}

// send queues cmd; false when the stream has ended or its queue is full.
func (t *telemetry) send(cmd *v2.TelemetryCommand) bool {
	select {
	case <-t.done:
		return false
	default:
	}
	select {
	case t.out <- cmd:
		return true
	default:
		return false
	}
}

// Telemetry serves a client's bidirectional stream: its Settings in, the
// server's Settings back (a client that gets none never starts), the
// answers to the server's calls (thread stacks, verified messages) in,
// and the server's commands (transaction checks) out. The stream's end
// closes the client's channel for the core.
func (d *Door) Telemetry(stream v2.MessagingService_TelemetryServer) error {
	c := callerOf(stream.Context())
	if err := c.requireClient(); err != nil {
		return grpcstatus.Error(codes.InvalidArgument, err.Error())
	}
	if err := d.authenticate(c); err != nil {
		return grpcstatus.Error(codes.Unauthenticated, statusOf(err).GetMessage())
	}
	t := &telemetry{out: make(chan *v2.TelemetryCommand, telemetryQueue), done: make(chan struct{})}
	written := make(chan struct{})
	go func() {
		defer close(written)
		for {
			select {
			case <-t.done:
				return
			case cmd := <-t.out:
				if err := stream.Send(cmd); err != nil {
					return
				}
			}
		}
	}()
	var s *session
	defer func() {
		close(t.done)
		<-written
		if s != nil && s.detach(t) {
			d.core.ChannelClosed(s.id)
		}
	}()
	for {
		cmd, err := stream.Recv()
		if err != nil {
			return nil // the client closed it, or the door is closing
		}
		switch x := cmd.GetCommand().(type) {
		case *v2.TelemetryCommand_Settings:
			got, reply, err := d.applySettings(c, x.Settings)
			if err != nil {
				// As the proxy: a bad settings command ends the stream, so the
				// client's start fails with the reason.
				code := codes.InvalidArgument
				if statusOf(err).GetCode() >= v2.Code_INTERNAL_ERROR {
					code = codes.Internal
				}
				return grpcstatus.Error(code, "process client telemetryCommand failed. "+statusOf(err).GetMessage())
			}
			if s != nil && s != got {
				s.detach(t)
			}
			s = got
			s.attach(t)
			t.send(reply)
		case *v2.TelemetryCommand_ThreadStackTrace:
			if s != nil {
				s.answered(x.ThreadStackTrace.GetNonce(), cmd)
			}
		case *v2.TelemetryCommand_VerifyMessageResult:
			if s != nil {
				s.answered(x.VerifyMessageResult.GetNonce(), cmd)
			}
		}
	}
}
