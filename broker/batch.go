package broker

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// errBadBatch is wrapped by batch body decoding errors.
var errBadBatch = errors.New("broker: malformed batch body")

// batchMessage is one message inside a SEND_BATCH_MESSAGE body.
type batchMessage struct {
	Flag       int32
	Body       []byte
	Properties map[string]string
}

// batchHeaderLen is totalSize, magic, bodyCRC, flag and bodyLen.
const batchHeaderLen = 5 * 4

// decodeBatch splits a batch body (RocketMQ MessageDecoder.decodeMessages):
// each message is totalSize i32, magic i32, bodyCRC i32, flag i32, bodyLen
// i32 + body, propsLen i16 + properties. totalSize must cover exactly those
// fields, so a corrupt body is refused rather than misread. Bodies alias b.
func decodeBatch(b []byte) ([]batchMessage, error) {
	var out []batchMessage
	be := binary.BigEndian
	for len(b) > 0 {
		i := len(out)
		if len(b) < batchHeaderLen+2 {
			return nil, fmt.Errorf("%w: message %d: %d bytes left, too short", errBadBatch, i, len(b))
		}
		total := int(int32(be.Uint32(b)))
		flag := int32(be.Uint32(b[12:]))
		bodyLen := int(int32(be.Uint32(b[16:])))
		if bodyLen < 0 || batchHeaderLen+bodyLen+2 > len(b) {
			return nil, fmt.Errorf("%w: message %d: body length %d with %d bytes left", errBadBatch, i, bodyLen, len(b))
		}
		body := b[batchHeaderLen : batchHeaderLen+bodyLen : batchHeaderLen+bodyLen]
		p := batchHeaderLen + bodyLen
		propsLen := int(be.Uint16(b[p:]))
		p += 2
		if p+propsLen > len(b) {
			return nil, fmt.Errorf("%w: message %d: properties length %d with %d bytes left", errBadBatch, i, propsLen, len(b)-p)
		}
		props := protocol.UnmarshalProperties(string(b[p : p+propsLen]))
		p += propsLen
		if total != p {
			return nil, fmt.Errorf("%w: message %d: totalSize %d, fields take %d", errBadBatch, i, total, p)
		}
		out = append(out, batchMessage{Flag: flag, Body: body, Properties: props})
		b = b[p:]
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no messages", errBadBatch)
	}
	return out, nil
}

// encodeBatch is the inverse of decodeBatch, as the official client lays a
// batch out (tests and tools use it).
func encodeBatch(msgs []batchMessage) []byte {
	var dst []byte
	be := binary.BigEndian
	for _, m := range msgs {
		props := protocol.MarshalProperties(m.Properties)
		total := batchHeaderLen + len(m.Body) + 2 + len(props)
		dst = be.AppendUint32(dst, uint32(total))
		dst = be.AppendUint32(dst, 0)
		dst = be.AppendUint32(dst, 0)
		dst = be.AppendUint32(dst, uint32(m.Flag))
		dst = be.AppendUint32(dst, uint32(len(m.Body)))
		dst = append(dst, m.Body...)
		dst = be.AppendUint16(dst, uint16(len(props)))
		dst = append(dst, props...)
	}
	return dst
}
