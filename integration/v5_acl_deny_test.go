package integration

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/runnelmq/runnel/acl"
	ouradmin "github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/remoting/protocol"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/runnelmq/runnel/integration/cluster"
)

// signedCtx is r's call context signed as the SDKs sign (MQv2-HMAC-SHA1
// of x-mq-date-time with the secret key); ak "" leaves it unsigned.
func (r rawV5) signedCtx(t testing.TB, ak, sk string) context.Context {
	ctx := r.ctx(t)
	if ak == "" {
		return ctx
	}
	now := time.Now().UTC().Format("20060102T150405Z")
	mac := hmac.New(sha1.New, []byte(sk))
	mac.Write([]byte(now))
	return metadata.AppendToOutgoingContext(ctx, "x-mq-date-time", now, "authorization",
		fmt.Sprintf("MQv2-HMAC-SHA1 Credential=%s, SignedHeaders=x-mq-date-time, Signature=%s", ak, hex.EncodeToString(mac.Sum(nil))))
}

// TestV5DefaultDeny: with access control on, on both models, every RPC
// of the gRPC door is refused to a caller without the right: FORBIDDEN
// for a known account that may not touch the topic or group the call
// names, UNAUTHORIZED for an unsigned call. Only the calls on a client's
// own session (Telemetry, Heartbeat, NotifyClientTermination) are open to
// any authenticated client, and, under plain ACL (1.0), reading a topic's
// route or offsets, which Java's plain ACL has no right for;
// broker/grpcdoor's rpcAccess says why, and TestEveryRPCHasAnAccessRule
// that these lists are the whole service.
func TestV5DefaultDeny(t *testing.T) {
	t.Run("acl1", func(t *testing.T) {
		c, _ := startACLCluster(t, aclYAML("", "DENY"), lenientNamesrvYAML, cluster.GRPC())
		aclCreateTopics(t, c, "deniedTopic")
		v5DefaultDeny(t, c, aclUserAK, aclUserSK, "QueryRoute", "QueryOffset")
	})
	t.Run("acl2", func(t *testing.T) {
		c := startAuthCluster(t, cluster.GRPC())
		createTopicsAs(t, c, authRootAK, authRootSK, "deniedTopic")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if _, err := c.AdminAs(t, acl.Credentials{AccessKey: authRootAK, SecretKey: authRootSK}).CreateUser(ctx, ouradmin.Where{},
			protocol.UserInfo{Username: "nobody", Password: "nobodySecret1"}); err != nil {
			t.Fatal(err)
		}
		v5DefaultDeny(t, c, "nobody", "nobodySecret1")
	})
}

// v5DefaultDeny sends every RPC as ak (who has no right on deniedTopic
// and deniedGroup) and unsigned; the RPCs named in open are let through
// for ak as the session calls are.
func v5DefaultDeny(t *testing.T, c *cluster.Cluster, ak, sk string, open ...string) {
	r := dialV5(t, c, 0, false)
	topic, group := &v2.Resource{Name: "deniedTopic"}, &v2.Resource{Name: "deniedGroup"}
	mq := &v2.MessageQueue{Topic: topic, Id: 0}
	streamStatus := func(recv func() (*v2.Status, error)) (*v2.Status, error) {
		st, err := recv()
		if err == io.EOF {
			return nil, fmt.Errorf("the stream ended without a status")
		}
		return st, err
	}
	calls := map[string]func(ctx context.Context) (*v2.Status, error){
		"QueryRoute": func(ctx context.Context) (*v2.Status, error) {
			resp, err := r.QueryRoute(ctx, &v2.QueryRouteRequest{Topic: topic})
			return resp.GetStatus(), err
		},
		"SendMessage": func(ctx context.Context) (*v2.Status, error) {
			resp, err := r.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{rawMessage("deniedTopic", v2.MessageType_NORMAL, "x")}})
			return resp.GetStatus(), err
		},
		"RecallMessage": func(ctx context.Context) (*v2.Status, error) {
			resp, err := r.RecallMessage(ctx, &v2.RecallMessageRequest{Topic: topic, RecallHandle: "djEgZGVuaWVkVG9waWMgYiAxIGs="})
			return resp.GetStatus(), err
		},
		"EndTransaction": func(ctx context.Context) (*v2.Status, error) {
			resp, err := r.EndTransaction(ctx, &v2.EndTransactionRequest{Topic: topic, MessageId: "m", TransactionId: "t", Resolution: v2.TransactionResolution_COMMIT})
			return resp.GetStatus(), err
		},
		"QueryAssignment": func(ctx context.Context) (*v2.Status, error) {
			resp, err := r.QueryAssignment(ctx, &v2.QueryAssignmentRequest{Topic: topic, Group: group})
			return resp.GetStatus(), err
		},
		"ReceiveMessage": func(ctx context.Context) (*v2.Status, error) {
			s, err := r.ReceiveMessage(ctx, &v2.ReceiveMessageRequest{Group: group, MessageQueue: mq, BatchSize: 1,
				InvisibleDuration: durationpb.New(time.Minute), LongPollingTimeout: durationpb.New(5 * time.Second)})
			if err != nil {
				return nil, err
			}
			return streamStatus(func() (*v2.Status, error) { m, err := s.Recv(); return m.GetStatus(), err })
		},
		"AckMessage": func(ctx context.Context) (*v2.Status, error) {
			resp, err := r.AckMessage(ctx, &v2.AckMessageRequest{Topic: topic, Group: group, Entries: []*v2.AckMessageEntry{{MessageId: "m", ReceiptHandle: "h"}}})
			return resp.GetStatus(), err
		},
		"ChangeInvisibleDuration": func(ctx context.Context) (*v2.Status, error) {
			resp, err := r.ChangeInvisibleDuration(ctx, &v2.ChangeInvisibleDurationRequest{Topic: topic, Group: group, MessageId: "m", ReceiptHandle: "h", InvisibleDuration: durationpb.New(time.Minute)})
			return resp.GetStatus(), err
		},
		"ForwardMessageToDeadLetterQueue": func(ctx context.Context) (*v2.Status, error) {
			resp, err := r.ForwardMessageToDeadLetterQueue(ctx, &v2.ForwardMessageToDeadLetterQueueRequest{Topic: topic, Group: group, MessageId: "m", ReceiptHandle: "h"})
			return resp.GetStatus(), err
		},
		"PullMessage": func(ctx context.Context) (*v2.Status, error) {
			s, err := r.PullMessage(ctx, &v2.PullMessageRequest{Group: group, MessageQueue: mq, BatchSize: 1, LongPollingTimeout: durationpb.New(5 * time.Second)})
			if err != nil {
				return nil, err
			}
			return streamStatus(func() (*v2.Status, error) { m, err := s.Recv(); return m.GetStatus(), err })
		},
		"UpdateOffset": func(ctx context.Context) (*v2.Status, error) {
			resp, err := r.UpdateOffset(ctx, &v2.UpdateOffsetRequest{Group: group, MessageQueue: mq, Offset: 1})
			return resp.GetStatus(), err
		},
		"GetOffset": func(ctx context.Context) (*v2.Status, error) {
			resp, err := r.GetOffset(ctx, &v2.GetOffsetRequest{Group: group, MessageQueue: mq})
			return resp.GetStatus(), err
		},
		"QueryOffset": func(ctx context.Context) (*v2.Status, error) {
			resp, err := r.QueryOffset(ctx, &v2.QueryOffsetRequest{MessageQueue: mq, QueryOffsetPolicy: v2.QueryOffsetPolicy_END})
			return resp.GetStatus(), err
		},
	}
	session := map[string]func(ctx context.Context) (*v2.Status, error){
		"Heartbeat": func(ctx context.Context) (*v2.Status, error) {
			resp, err := r.Heartbeat(ctx, &v2.HeartbeatRequest{ClientType: v2.ClientType_PRODUCER})
			return resp.GetStatus(), err
		},
		"NotifyClientTermination": func(ctx context.Context) (*v2.Status, error) {
			resp, err := r.NotifyClientTermination(ctx, &v2.NotifyClientTerminationRequest{})
			return resp.GetStatus(), err
		},
		"Telemetry": func(ctx context.Context) (*v2.Status, error) {
			s, err := r.Telemetry(ctx)
			if err != nil {
				return nil, err
			}
			if err := s.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: &v2.Settings{ClientType: v2.ClientType_PRODUCER.Enum(),
				PubSub: &v2.Settings_Publishing{Publishing: &v2.Publishing{Topics: []*v2.Resource{topic}}}}}}); err != nil {
				if errors.Is(err, io.EOF) {
					// The server ended the stream first (a refusal): grpc-go
					// gives its status to Recv, not to Send.
					_, err = s.Recv()
				}
				return nil, err
			}
			return streamStatus(func() (*v2.Status, error) { m, err := s.Recv(); return m.GetStatus(), err })
		},
	}
	for _, name := range open {
		session[name] = calls[name]
		delete(calls, name)
	}
	for name, call := range calls {
		st, err := call(r.signedCtx(t, ak, sk))
		wantCode(t, name+" by an account without the right", st, err, v2.Code_FORBIDDEN)
	}
	for name, call := range session {
		if st, err := call(r.signedCtx(t, ak, sk)); err != nil || st.GetCode() == v2.Code_FORBIDDEN || st.GetCode() == v2.Code_UNAUTHORIZED {
			t.Errorf("%s by an authenticated account: %v %v, want it let through", name, st, err)
		}
	}
	for name, call := range calls {
		st, err := call(r.signedCtx(t, "", ""))
		wantCode(t, name+" unsigned", st, err, v2.Code_UNAUTHORIZED)
	}
	for name, call := range session {
		st, err := call(r.signedCtx(t, "", ""))
		if grpcstatus.Code(err) == codes.Unauthenticated {
			continue // Telemetry refuses a stream, not a frame of it
		}
		wantCode(t, name+" unsigned", st, err, v2.Code_UNAUTHORIZED)
	}
}
