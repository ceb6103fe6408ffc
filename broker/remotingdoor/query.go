package remotingdoor

import (
	"context"

	"bytes"
	"strconv"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// uniqueKeyQueryFlag marks a QUERY_MESSAGE whose key is a UNIQ_KEY (Java
// MixAll.UNIQUE_MSG_QUERY_FLAG).
const uniqueKeyQueryFlag = "_UNIQUE_KEY_QUERY"

// handleViewMessage serves VIEW_MESSAGE_BY_ID (33): the stored message at a
// commit log offset.
func (d *Door) handleViewMessage(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.ViewMessageRequestHeader) *protocol.Command {
	rec, err := d.core.ViewMessage(h.Offset)
	return answerWith(req, nil, rec, err)
}

// handleQueryMessage serves QUERY_MESSAGE (12): messages of a topic by key
// (KEYS) within a store-time window, or by UNIQ_KEY when the request
// carries _UNIQUE_KEY_QUERY=true.
func (d *Door) handleQueryMessage(ctx context.Context, _ *remoting.Conn, req *protocol.Command, h *protocol.QueryMessageRequestHeader) *protocol.Command {
	uniq, _ := strconv.ParseBool(req.Ext(uniqueKeyQueryFlag))
	res, err := d.core.QueryMessage(core.MessageQuery{
		Topic: h.Topic, Key: h.Key, MaxNum: int(h.MaxNum), Begin: h.BeginTimestamp, End: h.EndTimestamp, Unique: uniq,
	})
	if err != nil {
		return failure(req, err)
	}
	ext := protocol.QueryMessageResponseHeader{
		IndexLastUpdateTimestamp: res.IndexLastUpdateTimestamp,
		IndexLastUpdatePhyoffset: res.IndexLastUpdatePhyoffset,
	}.Encode()
	return success(req, ext, bytes.Join(res.Records, nil))
}
