package remotingdoor

import (
	"testing"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestPopNeeds: the POP requests need Sub on their topic and group (a
// message that came back is named by its group's retry topic, which is
// the group's); a batch ack, on every topic and group of its body.
func TestPopNeeds(t *testing.T) {
	batch := protocol.BatchAckBody{Acks: []protocol.BatchAck{{ConsumerGroup: "g", Topic: "t"}, {ConsumerGroup: "g", Topic: "u"}}}.Encode()
	codes := tableDoor(t).aclCodes()
	for _, tc := range []struct {
		name string
		req  *protocol.Command
		want string
	}{
		{"pop", protocol.NewRequest(protocol.ReqPopMessage, map[string]string{"topic": "t", "consumerGroup": "g"}, nil), "Topic:t Sub, Group:g Sub"},
		{"notification", protocol.NewRequest(protocol.ReqNotification, map[string]string{"topic": "t", "consumerGroup": "g"}, nil), "Topic:t Sub, Group:g Sub"},
		{"ack", protocol.NewRequest(protocol.ReqAckMessage, map[string]string{"topic": "t", "consumerGroup": "g"}, nil), "Group:g Sub, Topic:t Sub"},
		{"ack of a message that came back", protocol.NewRequest(protocol.ReqAckMessage, map[string]string{"topic": "%RETRY%g_t", "consumerGroup": "g"}, nil), "Group:g Sub"},
		{"change", protocol.NewRequest(protocol.ReqChangeMessageInvisibleTime, map[string]string{"topic": "t", "consumerGroup": "g"}, nil), "Group:g Sub, Topic:t Sub"},
		{"batch ack", protocol.NewRequest(protocol.ReqBatchAckMessage, nil, batch), "Group:g Sub, Topic:t Sub, Topic:u Sub"},
	} {
		if got := needsOf(t, codes, tc.name, tc.req); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	req := protocol.NewRequest(protocol.ReqBatchAckMessage, nil, []byte("{"))
	if _, err := codes[req.Code](nil, req, acl.Collect(req)); err == nil {
		t.Error("a batch ack body that does not decode was read")
	}
}
