package broker

import (
	"context"
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

// uniqueKeyQueryFlag marks a QUERY_MESSAGE whose key is a UNIQ_KEY (Java
// MixAll.UNIQUE_MSG_QUERY_FLAG).
const uniqueKeyQueryFlag = "_UNIQUE_KEY_QUERY"

// maxQueryNum caps QUERY_MESSAGE answers (Java defaultQueryMaxNum).
const maxQueryNum = 32

// handleViewMessage serves VIEW_MESSAGE_BY_ID (33): the stored message at a
// commit log offset (the tools decode it from an offsetMsgId).
func (b *Broker) handleViewMessage(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.ViewMessageRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	rec, err := b.st.ReadRecord(h.Offset)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return errResponse(req, protocol.RespSystemError, "can not find message by the offset, %d", h.Offset)
		}
		return errResponse(req, protocol.RespSystemError, "read message at %d: %v", h.Offset, err)
	}
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.Body = rec
	return resp
}

// handleQueryMessage serves QUERY_MESSAGE (12): messages of a topic by key
// (KEYS) within a store-time window, or by UNIQ_KEY when the request
// carries _UNIQUE_KEY_QUERY=true.
func (b *Broker) handleQueryMessage(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
	var h protocol.QueryMessageRequestHeader
	if err := h.Decode(req.ExtFields); err != nil {
		return errResponse(req, protocol.RespSystemError, "%v", err)
	}
	n := int(h.MaxNum)
	if n <= 0 || n > maxQueryNum {
		n = maxQueryNum
	}
	var recs [][]byte
	var err error
	if uniq, _ := strconv.ParseBool(req.Ext(uniqueKeyQueryFlag)); uniq {
		// The store's unique-key index takes no time range, but Java applies
		// the request's range to both kinds of query; the range is applied
		// here, to every copy, before the cap (a key has one or two copies).
		recs, err = b.st.QueryByUniqKey(h.Topic, h.Key, maxQueryNum)
		recs = storedWithin(recs, h.BeginTimestamp, h.EndTimestamp, n)
	} else {
		recs, err = b.st.QueryByKey(h.Topic, h.Key, n, h.BeginTimestamp, h.EndTimestamp)
	}
	if err != nil {
		return errResponse(req, protocol.RespSystemError, "query %s by key %q: %v", h.Topic, h.Key, err)
	}
	if len(recs) == 0 {
		return errResponse(req, protocol.RespQueryNotFound, "can not find message, maybe time range not correct")
	}
	var body []byte
	for _, r := range recs {
		body = append(body, r...)
	}
	resp := protocol.NewResponse(req, protocol.RespSuccess, "")
	resp.ExtFields = protocol.QueryMessageResponseHeader{
		IndexLastUpdateTimestamp: b.cfg.Now().UnixMilli(),
		IndexLastUpdatePhyoffset: b.st.MaxPhysOffset(),
	}.Encode()
	resp.Body = body
	return resp
}

// storedWithin keeps, of records oldest first, at most n whose store time
// is within [begin, end] (ms; end <= 0 is no upper bound, as the store's
// key query takes it).
func storedWithin(recs [][]byte, begin, end int64, n int) [][]byte {
	out := recs[:0]
	for _, r := range recs {
		ts, ok := recordStoreTime(r)
		if !ok || ts < begin || (end > 0 && ts > end) {
			continue
		}
		if out = append(out, r); len(out) == n {
			break
		}
	}
	return out
}

// recordStoreTime reads the store timestamp of an encoded record; false
// when the record is too short to hold one.
func recordStoreTime(rec []byte) (int64, bool) {
	if len(rec) < protocol.StoredSysFlagPos+4 {
		return 0, false
	}
	pos := protocol.StoreTimestampPos(int32(binary.BigEndian.Uint32(rec[protocol.StoredSysFlagPos:])))
	if len(rec) < pos+8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(rec[pos:])), true
}
