package grpcdoor

import (
	"strings"
	"testing"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/proto"
)

// FuzzTxID: a transaction id decodes only as the door made it, and what
// it makes decodes back.
func FuzzTxID(f *testing.F) {
	f.Add(encodeTxID(123456, 7))
	f.Add("")
	f.Add(strings.Repeat("F", txIDLen))
	f.Fuzz(func(t *testing.T, id string) {
		phys, qoff, ok := decodeTxID(id)
		if !ok {
			return
		}
		if phys < 0 || qoff < 0 || !strings.EqualFold(encodeTxID(phys, qoff), id) {
			t.Fatalf("%q decoded to %d, %d", id, phys, qoff)
		}
	})
}

// FuzzAuthorization: any authorization value parses or is refused, and
// a signature the SDK writes is read back.
func FuzzAuthorization(f *testing.F) {
	f.Add("MQv2-HMAC-SHA1 Credential=ak//Rocketmq, SignedHeaders=x-mq-date-time, Signature=abc")
	f.Add("MQv2-HMAC-SHA1")
	f.Add("Basic x")
	f.Fuzz(func(t *testing.T, v string) {
		ak, sig, ok := parseAuthorization(v)
		if ok && (ak == "" || sig == "" || strings.Contains(ak, "/")) {
			t.Fatalf("%q parsed to %q %q", v, ak, sig)
		}
	})
}

// FuzzRequests: every request the door decodes from the wire, built from
// any bytes, is converted without a panic: the send properties and the
// subscription of whatever message and filter it carries.
func FuzzRequests(f *testing.F) {
	seed, _ := proto.Marshal(&v2.SendMessageRequest{Messages: []*v2.Message{{Topic: &v2.Resource{Name: "T"},
		SystemProperties: &v2.SystemProperties{MessageId: "id", Tag: proto.String("a")}, Body: []byte("x")}}})
	f.Add(seed)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var send v2.SendMessageRequest
		if proto.Unmarshal(b, &send) == nil {
			for _, m := range send.GetMessages() {
				_ = checkDigest(m)
				_, _ = sendProperties(caller{Namespace: "ns"}, m, "T", time.Now(), time.Hour)
			}
		}
		for _, req := range []proto.Message{&v2.ReceiveMessageRequest{}, &v2.PullMessageRequest{}, &v2.TelemetryCommand{},
			&v2.AckMessageRequest{}, &v2.EndTransactionRequest{}, &v2.QueryRouteRequest{}} {
			if proto.Unmarshal(b, req) != nil {
				continue
			}
			switch r := req.(type) {
			case *v2.ReceiveMessageRequest:
				_, _ = subscriptionOf(caller{}, r.GetMessageQueue().GetTopic(), r.GetFilterExpression())
			case *v2.PullMessageRequest:
				_, _ = subscriptionOf(caller{}, r.GetMessageQueue().GetTopic(), r.GetFilterExpression())
			case *v2.TelemetryCommand:
				for _, e := range r.GetSettings().GetSubscription().GetSubscriptions() {
					_, _ = subscriptionOf(caller{}, e.GetTopic(), e.GetExpression())
				}
			case *v2.EndTransactionRequest:
				_, _, _ = decodeTxID(r.GetTransactionId())
			case *v2.QueryRouteRequest:
				_ = checkTopic(caller{Namespace: "ns"}.name(r.GetTopic()))
			}
		}
	})
}
