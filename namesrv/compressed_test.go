package namesrv

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// A Java broker with compressedRegister=true sends its topics as a zlib
// stream of length-prefixed parts (RocketMQ RegisterBrokerBody.encode(true))
// with the compressed ext field true and the CRC-32 of the compressed
// bytes; the name server routes them like a JSON registration.
func TestRegisterCompressedBody(t *testing.T) {
	e := start(t, nil)
	c := newClient(t, nil)

	var plain bytes.Buffer
	part := func(s string) {
		binary.Write(&plain, binary.BigEndian, int32(len(s)))
		plain.WriteString(s)
	}
	part(`{"counter":3,"stateVersion":0,"timestamp":1700000000000}`)
	binary.Write(&plain, binary.BigEndian, int32(2))
	part(`TopicA 8 4 6 SINGLE_TAG `)
	part(`TopicB 2 2 4 SINGLE_TAG {"+message.type":"NORMAL"}`)
	part(`[]`)
	binary.Write(&plain, binary.BigEndian, int32(0)) // topic queue mappings
	var body bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&body, zlib.BestCompression)
	zw.Write(plain.Bytes())
	zw.Close()

	h := protocol.RegisterBrokerRequestHeader{
		BrokerName: "broker-z", BrokerAddr: "10.0.0.7:10911", ClusterName: "DefaultCluster", HAServerAddr: "10.0.0.7:10912",
		Compressed: true, BodyCRC32: protocol.BodyCRC32(body.Bytes()),
	}
	resp := call(t, c, e.addr, protocol.NewRequest(protocol.ReqRegisterBroker, h.Encode(), body.Bytes()))
	if resp.Code != protocol.RespSuccess {
		t.Fatalf("compressed register answered %d %q", resp.Code, resp.Remark)
	}
	for topic, want := range map[string]protocol.QueueData{
		"TopicA": {BrokerName: "broker-z", ReadQueueNums: 8, WriteQueueNums: 4, Perm: 6},
		"TopicB": {BrokerName: "broker-z", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 4},
	} {
		r, resp := e.route(t, c, topic)
		if r == nil {
			t.Fatalf("%s not routed: %d %q", topic, resp.Code, resp.Remark)
		}
		if len(r.QueueDatas) != 1 || r.QueueDatas[0] != want || len(r.BrokerDatas) != 1 || r.BrokerDatas[0].BrokerAddrs[0] != "10.0.0.7:10911" {
			t.Fatalf("%s routed as %+v", topic, r)
		}
	}
}
