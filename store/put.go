package store

import (
	"fmt"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// PutResult is where one message was stored.
type PutResult struct {
	QueueOffset     int64
	CommitLogOffset int64
	Size            int32
	StoreTimestamp  int64
	// OffsetMsgID is the message's offsetMsgId (store host + physical
	// offset), the msgId of a SEND response.
	OffsetMsgID string
}

// Put stores msgs in one atomic write and returns once they are
// acknowledged per the flush mode. Each message goes to its own Topic and
// QueueID; its QueueOffset, CommitLogOffset, StoreTimestamp, StoreSize and
// BodyCRC are assigned by the store (msgs are not modified). A message
// without a StoreHost gets Options.StoreHost. A batch send to one queue
// therefore gets consecutive queue offsets.
func (s *Store) Put(msgs []*protocol.MessageExt) ([]PutResult, error) {
	if len(msgs) == 0 {
		return nil, fmt.Errorf("%w: no messages", ErrInvalidOp)
	}
	size := 0
	for _, m := range msgs {
		size += protocol.StoredSize(m)
	}
	buf := make([]byte, 0, size)
	op := &Op{Kind: OpAppend, Timestamp: s.opts.Clock().UnixMilli(), Messages: make([]AppendMessage, len(msgs))}
	for i, m := range msgs {
		start := len(buf)
		var err error
		if !m.StoreHost.IsValid() {
			c := *m
			c.StoreHost = s.opts.StoreHost
			buf, err = protocol.AppendStoredMessage(buf, &c)
		} else {
			buf, err = protocol.AppendStoredMessage(buf, m)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: message %d: %w", ErrInvalidOp, i, err)
		}
		rec := buf[start:len(buf):len(buf)]
		if len(rec) > s.opts.MaxMessageSize {
			return nil, fmt.Errorf("%w: message %d: %d bytes exceeds MaxMessageSize %d", ErrInvalidOp, i, len(rec), s.opts.MaxMessageSize)
		}
		op.Messages[i] = AppendMessage{
			Record:   rec,
			Topic:    m.Topic,
			QueueID:  m.QueueID,
			TagsCode: protocol.TagsHashCode(m.Tags()),
			Keys:     m.Keys(),
			UniqKey:  m.UniqKey(),
		}
	}
	res, err := s.Apply(op)
	if err != nil {
		return nil, err
	}
	out := make([]PutResult, len(res.Appended))
	for i, a := range res.Appended {
		host := msgs[i].StoreHost
		if !host.IsValid() {
			host = s.opts.StoreHost
		}
		out[i] = PutResult{
			QueueOffset: a.QueueOffset, CommitLogOffset: a.PhysOffset, Size: a.Size,
			StoreTimestamp: a.StoreTimestamp, OffsetMsgID: protocol.OffsetMsgID(host, a.PhysOffset),
		}
	}
	return out, nil
}
