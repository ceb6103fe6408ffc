package grpcdoor

import (
	"context"
	"crypto/tls"
	"path"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"

	"github.com/runnelmq/runnel/remoting"
)

// selfSigned is the certificate of a door configured without one.
func selfSigned() (tls.Certificate, error) {
	cert, _, err := remoting.SelfSignedCertificate()
	return cert, err
}

// statused is every response of the service: each carries a Status.
type statused interface{ GetStatus() *v2.Status }

// unaryObserver tells Config.Observe of each unary call and its answer's
// code.
func (d *Door) unaryObserver(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if d.cfg.Metrics == nil {
		return h(ctx, req)
	}
	start := time.Now()
	resp, err := h(ctx, req)
	code, answered := v2.Code_INTERNAL_SERVER_ERROR, false
	if s, ok := resp.(statused); ok && err == nil {
		code, answered = s.GetStatus().GetCode(), true
	}
	d.cfg.Metrics.ObserveGRPC(path.Base(info.FullMethod), code.String(), false, answered, time.Since(start))
	return resp, err
}

// streamObserver tells Config.Observe of each streaming call as it ends
// (a receive's code is the status frame it sent: codeStream).
func (d *Door) streamObserver(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if d.cfg.Metrics == nil || info.IsClientStream {
		return h(srv, ss) // Telemetry lasts as long as its client: not a call to time
	}
	start := time.Now()
	cs := &codeStream{ServerStream: ss, code: v2.Code_OK}
	err := h(srv, cs)
	d.cfg.Metrics.ObserveGRPC(path.Base(info.FullMethod), cs.code.String(), true, err == nil, time.Since(start))
	return err
}

// codeStream remembers the code of the last status frame a stream sent.
type codeStream struct {
	grpc.ServerStream
	code v2.Code
}

func (s *codeStream) SendMsg(m any) error {
	switch r := m.(type) {
	case *v2.ReceiveMessageResponse:
		if st := r.GetStatus(); st != nil {
			s.code = st.GetCode()
		}
	case *v2.PullMessageResponse:
		if st := r.GetStatus(); st != nil {
			s.code = st.GetCode()
		}
	}
	return s.ServerStream.SendMsg(m)
}
