package integration

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/topicconf"
)

// rawV5 is a MessagingService client of the generated stubs, for the
// answers the SDK does not show (it checks much on its own side).
type rawV5 struct {
	v2.MessagingServiceClient
	clientID string
}

// dialV5 connects to broker i's gRPC door, in plaintext or TLS.
func dialV5(t testing.TB, c *cluster.Cluster, i int, useTLS bool) rawV5 {
	t.Helper()
	creds := insecure.NewCredentials()
	if useTLS {
		creds = credentials.NewTLS(&tls.Config{InsecureSkipVerify: true})
	}
	conn, err := grpc.NewClient(c.GRPCAddr(i), grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return rawV5{MessagingServiceClient: v2.NewMessagingServiceClient(conn), clientID: instance("raw-v5")}
}

// ctx is a call's context with the SDK's metadata.
func (r rawV5) ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return metadata.AppendToOutgoingContext(ctx, "x-mq-client-id", r.clientID, "x-mq-language", "GO",
		"x-mq-protocol", "v2", "x-mq-client-version", "5.1.4")
}

// rawMessage is a message as the SDK sends it.
func rawMessage(topic string, mt v2.MessageType, body string) *v2.Message {
	return &v2.Message{Topic: &v2.Resource{Name: topic}, Body: []byte(body), SystemProperties: &v2.SystemProperties{
		MessageId: instance("id"), MessageType: mt, BornTimestamp: timestamppb.Now(), BornHost: "test"}}
}

func wantCode(t testing.TB, what string, st *v2.Status, err error, code v2.Code) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if st.GetCode() != code || strings.TrimSpace(st.GetMessage()) == "" {
		t.Fatalf("%s: %v %q, want %v with a message", what, st.GetCode(), st.GetMessage(), code)
	}
}

// TestV5ErrorsAsTheProxyGivesThem: the door's refusals carry the code
// RocketMQ's proxy gives and a message a person can act on, over
// plaintext and TLS on the one port.
func TestV5ErrorsAsTheProxyGivesThem(t *testing.T) {
	c := startV5(t, cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.AutoCreateTopicEnable = false
		cfg.MaxMessageSize = 1024
	}))
	for _, useTLS := range []bool{false, true} {
		r := dialV5(t, c, 0, useTLS)
		ctx := r.ctx(t)

		hb, err := r.Heartbeat(ctx, &v2.HeartbeatRequest{ClientType: v2.ClientType_PRODUCER})
		wantCode(t, "heartbeat before settings", hb.GetStatus(), err, v2.Code_UNRECOGNIZED_CLIENT_TYPE)

		noID, err := r.QueryRoute(context.Background(), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "T"}})
		wantCode(t, "no client id", noID.GetStatus(), err, v2.Code_CLIENT_ID_REQUIRED)

		route, err := r.QueryRoute(ctx, &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "NoSuchTopic"}})
		wantCode(t, "route of an unknown topic", route.GetStatus(), err, v2.Code_TOPIC_NOT_FOUND)

		bad, err := r.QueryRoute(ctx, &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "bad topic!"}})
		wantCode(t, "route of an illegal name", bad.GetStatus(), err, v2.Code_ILLEGAL_TOPIC)

		sys, err := r.QueryRoute(ctx, &v2.QueryRouteRequest{Topic: &v2.Resource{Name: topicconf.DefaultTopic}})
		wantCode(t, "route of a system topic", sys.GetStatus(), err, v2.Code_ILLEGAL_TOPIC)

		send, err := r.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{rawMessage("NoSuchTopic", v2.MessageType_NORMAL, "x")}})
		wantCode(t, "send to an unknown topic", send.GetStatus(), err, v2.Code_TOPIC_NOT_FOUND)

		empty, err := r.SendMessage(ctx, &v2.SendMessageRequest{})
		wantCode(t, "send of nothing", empty.GetStatus(), err, v2.Code_MESSAGE_CORRUPTED)

		tx, err := r.EndTransaction(ctx, &v2.EndTransactionRequest{Topic: &v2.Resource{Name: "T"}, TransactionId: "not-ours",
			Resolution: v2.TransactionResolution_COMMIT})
		wantCode(t, "end of a transaction id not given out", tx.GetStatus(), err, v2.Code_INVALID_TRANSACTION_ID)
	}

	// A topic made without a message type is NORMAL: FIFO sends are refused.
	createTopic(t, c, 0, "V5Normal", 4)
	r := dialV5(t, c, 0, false)
	ctx := r.ctx(t)
	route, err := r.QueryRoute(ctx, &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "V5Normal"}})
	wantCode(t, "route", route.GetStatus(), err, v2.Code_OK)
	if qs := route.GetMessageQueues(); len(qs) != 4 || qs[0].GetBroker().GetEndpoints().GetAddresses()[0].GetPort() == 0 ||
		len(qs[0].GetAcceptMessageTypes()) != 1 || qs[0].GetAcceptMessageTypes()[0] != v2.MessageType_NORMAL {
		t.Fatalf("route %v", route)
	}
	fifo := rawMessage("V5Normal", v2.MessageType_FIFO, "x")
	g := "g1"
	fifo.SystemProperties.MessageGroup = &g
	wrong, err := r.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{fifo}})
	wantCode(t, "FIFO send to a NORMAL topic", wrong.GetStatus(), err, v2.Code_MESSAGE_PROPERTY_CONFLICT_WITH_TYPE)

	big, err := r.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{rawMessage("V5Normal", v2.MessageType_NORMAL, strings.Repeat("x", 2048))}})
	wantCode(t, "body over maxMessageSize", big.GetStatus(), err, v2.Code_MESSAGE_BODY_TOO_LARGE)

	sysProp := rawMessage("V5Normal", v2.MessageType_NORMAL, "x")
	sysProp.UserProperties = map[string]string{"UNIQ_KEY": "forged"}
	prop, err := r.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{sysProp}})
	wantCode(t, "a system property as a user's", prop.GetStatus(), err, v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY)

	corrupt := rawMessage("V5Normal", v2.MessageType_NORMAL, "x")
	corrupt.SystemProperties.BodyDigest = &v2.Digest{Type: v2.DigestType_CRC32, Checksum: "DEADBEEF"}
	dg, err := r.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{corrupt}})
	wantCode(t, "a body that does not match its digest", dg.GetStatus(), err, v2.Code_MESSAGE_CORRUPTED)

	ok, err := r.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{rawMessage("V5Normal", v2.MessageType_NORMAL, "x")}})
	wantCode(t, "a good send", ok.GetStatus(), err, v2.Code_OK)

	for _, h := range []string{"", "forged", "1 2 3 4 5 broker-a 0 0", strings.Repeat("9", 300)} {
		ack, err := r.AckMessage(ctx, &v2.AckMessageRequest{Group: &v2.Resource{Name: "g"}, Topic: &v2.Resource{Name: "V5Normal"},
			Entries: []*v2.AckMessageEntry{{MessageId: "m", ReceiptHandle: h}}})
		wantCode(t, "ack of handle "+h, ack.GetStatus(), err, v2.Code_INVALID_RECEIPT_HANDLE)
		ch, err := r.ChangeInvisibleDuration(ctx, &v2.ChangeInvisibleDurationRequest{Group: &v2.Resource{Name: "g"},
			Topic: &v2.Resource{Name: "V5Normal"}, ReceiptHandle: h, InvisibleDuration: durationpb.New(time.Second)})
		wantCode(t, "change of handle "+h, ch.GetStatus(), err, v2.Code_INVALID_RECEIPT_HANDLE)
	}
}
