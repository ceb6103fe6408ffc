package remoting

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/runnelmq/runnel/internal/official"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// The official Go client talks to a Server unchanged: its admin asks for the
// topic list (GET_ALL_TOPIC_LIST_FROM_NAMESERVER) and decodes our answer.
func TestOfficialClientRoundTrip(t *testing.T) {
	rlog.SetLogLevel("error")
	forEachTransport(t, func(t *testing.T, tr string) {
		seen := make(chan *protocol.Command, 1)
		s := startServer(t, tr, nil, map[int16]Handler{
			protocol.ReqGetAllTopicListFromNameServer: func(_ context.Context, _ *Conn, req *protocol.Command) *protocol.Command {
				seen <- req
				resp := protocol.NewResponse(req, protocol.RespSuccess, "")
				resp.Body = []byte(`{"topicList":["TopicA","TopicB"]}`)
				return resp
			},
		})
		list, err := official.TopicList(t, s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(list, []string{"TopicA", "TopicB"}) {
			t.Fatalf("official client decoded %v", list)
		}
		if req := <-seen; req.Language != "GO" || req.SerializeType != protocol.SerializeJSON {
			t.Fatalf("request as seen by the server: %+v", req)
		}
	})
}
