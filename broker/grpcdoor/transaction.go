package grpcdoor

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"strings"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/runnelmq/runnel/broker/transaction"
)

// A transaction id, as the door hands it out with a half message's send
// result and with a check of it, names where the half is stored: its
// commit log offset and its offset in the half queue, 8 bytes each,
// big-endian, in hex (32 characters). It is all END_TRANSACTION needs, so
// a producer can end its transaction on any door of the broker, after a
// restart or a failover alike (a replicated group's nodes hold the same
// log).
const txIDLen = 32

// encodeTxID returns the transaction id of the half at commitLogOffset
// and queueOffset.
func encodeTxID(commitLogOffset, queueOffset int64) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(commitLogOffset))
	binary.BigEndian.PutUint64(b[8:], uint64(queueOffset))
	return strings.ToUpper(hex.EncodeToString(b[:]))
}

// decodeTxID reads a transaction id; ok is false for one the door did
// not make.
func decodeTxID(id string) (commitLogOffset, queueOffset int64, ok bool) {
	if len(id) != txIDLen {
		return 0, 0, false
	}
	var b [16]byte
	if _, err := hex.Decode(b[:], []byte(id)); err != nil {
		return 0, 0, false
	}
	commitLogOffset, queueOffset = int64(binary.BigEndian.Uint64(b[:8])), int64(binary.BigEndian.Uint64(b[8:]))
	if commitLogOffset < 0 || queueOffset < 0 {
		return 0, 0, false
	}
	return commitLogOffset, queueOffset, true
}

// EndTransaction commits or rolls back a transaction's half message, on
// the producer's word or as its answer to a check
// (RecoverOrphanedTransactionCommand). UNSPECIFIED leaves it to the
// check, answered OK, as the proxy does.
func (d *Door) EndTransaction(ctx context.Context, req *v2.EndTransactionRequest) (*v2.EndTransactionResponse, error) {
	return &v2.EndTransactionResponse{Status: statusOf(d.endTransaction(ctx, req))}, nil
}

func (d *Door) endTransaction(ctx context.Context, req *v2.EndTransactionRequest) error {
	c, err := d.begin(ctx)
	if err != nil {
		return err
	}
	topic := c.name(req.GetTopic())
	if err := checkTopic(topic); err != nil {
		return err
	}
	if err := d.authorize(c, access{Topic: topic, Action: actionPub}); err != nil {
		return err
	}
	if strings.TrimSpace(req.GetTransactionId()) == "" {
		return refuse(v2.Code_INVALID_TRANSACTION_ID, "transaction id cannot be empty")
	}
	phys, qoff, ok := decodeTxID(req.GetTransactionId())
	if !ok {
		return refuse(v2.Code_INVALID_TRANSACTION_ID, "transaction id "+req.GetTransactionId()+" was not given by this broker")
	}
	if err := d.checkWritable(); err != nil {
		return err
	}
	end := transaction.EndRequest{
		ProducerGroup: topic, QueueOffset: qoff, CommitLogOffset: phys,
		FromCheck: req.GetSource() == v2.TransactionSource_SOURCE_SERVER_CHECK,
		MsgID:     req.GetMessageId(), TransactionID: req.GetTransactionId(),
	}
	switch req.GetResolution() {
	case v2.TransactionResolution_COMMIT:
		end.Resolution = transaction.Commit
	case v2.TransactionResolution_ROLLBACK:
		end.Resolution = transaction.Rollback
	}
	_, err = d.core.EndTransaction(end, c.ClientID+" "+c.Remote, "")
	return err
}
