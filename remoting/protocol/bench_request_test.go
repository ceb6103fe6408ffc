package protocol

import "testing"

// BenchmarkDecodeRequest is what the broker pays to read a hot request's
// header: the frame decode and the typed header decode its handler does,
// for a send with the long keys (the official client's SEND_MESSAGE), one
// with the short keys (our client's SEND_MESSAGE_V2) and a pull, in both
// encodings.
func BenchmarkDecodeRequest(b *testing.B) {
	cmds := benchCommands()
	v1 := cmds["send"]
	h, err := DecodeSendMessageHeader(v1.Code, v1.ExtFields)
	if err != nil {
		b.Fatal(err)
	}
	v2 := *v1
	v2.Code, v2.ExtFields = ReqSendMessageV2, h.EncodeV2()
	benchEachFrame(b, map[string]*Command{"send": v1, "sendV2": &v2, "pull": cmds["pull"]}, func(b *testing.B, frame []byte) {
		for b.Loop() {
			req, err := DecodeFrame(frame)
			if err != nil {
				b.Fatal(err)
			}
			if err := decodeRequestHeader(req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// decodeRequestHeader is the typed decode the broker's handler of req does.
func decodeRequestHeader(req *Command) error {
	if req.Code == ReqPullMessage {
		var h PullMessageRequestHeader
		return h.DecodeCommand(req)
	}
	_, err := DecodeSendMessageCommand(req)
	return err
}
