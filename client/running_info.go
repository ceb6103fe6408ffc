package client

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// runningInfo is the GET_CONSUMER_RUNNING_INFO body: properties, the
// subscriptions and per-queue process-queue state, with mqTable keyed by
// fastjson-style object keys as Java's admin tools expect.
func (c *PushConsumer) runningInfo() []byte {
	props := map[string]string{
		"consumerGroup":       c.cfg.Group,
		"consumeType":         protocol.ConsumePassively,
		"messageModel":        c.cfg.Model.String(),
		"consumeFromWhere":    c.cfg.consumeFromString(),
		"consumeOrderly":      strconv.FormatBool(c.orderly()),
		"pullBatchSize":       strconv.Itoa(c.cfg.PullBatchSize),
		"consumeThreadMax":    strconv.Itoa(c.cfg.ConsumeGoroutines),
		"PROP_CLIENT_VERSION": "runnel",
	}
	subs := c.subscriptions()
	var subList []protocol.SubscriptionData
	for _, t := range slices.Sorted(maps.Keys(subs)) {
		s := subs[t]
		if s.TagsSet == nil {
			s.TagsSet = []string{}
		}
		if s.CodeSet == nil {
			s.CodeSet = protocol.CodeSet{}
		}
		subList = append(subList, s)
	}
	pb, _ := json.Marshal(props)
	sb, _ := json.Marshal(subList)
	out := []byte(`{"properties":`)
	out = append(out, pb...)
	out = append(out, `,"subscriptionSet":`...)
	out = append(out, sb...)
	out = append(out, `,"mqTable":{`...)
	_, store, _ := c.state()
	qss := c.queueStates()
	slices.SortFunc(qss, func(a, b *queueState) int { return queue.Compare(a.mq, b.mq) })
	for i, qs := range qss {
		if i > 0 {
			out = append(out, ',')
		}
		key := protocol.AppendQueueKey(nil, qs.mq)
		s := qs.pq.Stats()
		var commit int64 = -1
		if store != nil {
			if off, ok := store.Snapshot(qs.mq.Topic)[qs.mq]; ok {
				commit = off
			}
		}
		val, _ := json.Marshal(map[string]any{
			"commitOffset": commit, "cachedMsgMinOffset": s.MinOffset, "cachedMsgMaxOffset": s.MaxOffset,
			"cachedMsgCount": s.Count, "cachedMsgSizeInMiB": s.SizeBytes >> 20, "locked": s.Locked,
			"droped": s.Dropped, "lastPullTimestamp": s.LastPull.UnixMilli(), "lastConsumeTimestamp": s.LastConsume.UnixMilli(),
		})
		out = append(out, key...)
		out = append(out, ':')
		out = append(out, val...)
	}
	out = append(out, `},"statusTable":{},"jstack":""}`...)
	return out
}

// consumeDirectly is CONSUME_MESSAGE_DIRECTLY (admin tools' "consume this
// message"): the listener runs on m once, outside flow control and offsets;
// the answer is Java's ConsumeMessageDirectlyResult with the result as its
// ordinal (0 success, 1 later, 4 exception).
func (c *PushConsumer) consumeDirectly(ctx context.Context, m *protocol.MessageExt, brokerName string) []byte {
	ext := toExt(queue.MessageQueue{Topic: m.Topic, BrokerName: brokerName, QueueID: m.QueueID}, []*protocol.MessageExt{m})
	start := time.Now()
	res := struct {
		Order          bool   `json:"order"`
		AutoCommit     bool   `json:"autoCommit"`
		ConsumeResult  int    `json:"consumeResult"`
		Remark         string `json:"remark"`
		SpentTimeMills int64  `json:"spentTimeMills"`
	}{Order: c.orderly(), AutoCommit: true}
	if c.orderly() {
		if c.callOrderly(ctx, exts(ext)) != OrderlySuccess {
			res.ConsumeResult = 1
		}
	} else if c.callConcurrent(ctx, exts(ext)) != ConsumeSuccess {
		res.ConsumeResult = 1
	}
	res.SpentTimeMills = time.Since(start).Milliseconds()
	out, _ := json.Marshal(res)
	return out
}

// consumerStatus is GET_CONSUMER_STATUS_FROM_CLIENT: the in-memory offsets
// of topic's queues, {"messageQueueTable":{<mq>:offset,...}} with fastjson
// keys.
func (c *PushConsumer) consumerStatus(topic string) []byte {
	_, store, _ := c.state()
	out := []byte(`{"messageQueueTable":{`)
	if store != nil {
		snap := store.Snapshot(topic)
		mqs := queue.Sorted(slices.Collect(maps.Keys(snap)))
		for i, mq := range mqs {
			if i > 0 {
				out = append(out, ',')
			}
			out = protocol.AppendQueueKey(out, mq)
			out = append(out, ':')
			out = strconv.AppendInt(out, snap[mq], 10)
		}
	}
	return append(out, `}}`...)
}
