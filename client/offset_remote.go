package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// remoteStore is the clustering-mode offset.Store: offsets kept in memory,
// read from and persisted to the broker that owns each queue (RocketMQ's
// RemoteBrokerOffsetStore).
type remoteStore struct {
	inst  *instance
	group string
	table offset.Table
}

var _ offset.Store = (*remoteStore)(nil)

func (s *remoteStore) Load(context.Context) error { return nil }

func (s *remoteStore) Update(mq queue.MessageQueue, off int64, increaseOnly bool) {
	s.table.Update(mq, off, increaseOnly)
}

func (s *remoteStore) Read(ctx context.Context, mq queue.MessageQueue, t offset.ReadType) (int64, error) {
	switch t {
	case offset.ReadFromMemory:
		if off, ok := s.table.Get(mq); ok {
			return off, nil
		}
		return offset.NoOffset, nil
	case offset.ReadMemoryThenStore:
		if off, ok := s.table.Get(mq); ok {
			return off, nil
		}
		fallthrough
	case offset.ReadFromStore:
		off, err := s.query(ctx, mq)
		if err != nil {
			return 0, err
		}
		if off >= 0 {
			s.table.Update(mq, off, false)
		}
		return off, nil
	}
	return 0, fmt.Errorf("%w: %v", offset.ErrBadReadType, t)
}

// query asks the broker; QUERY_NOT_FOUND is NoOffset, any other failure
// an error (the queue is then not assigned this round).
func (s *remoteStore) query(ctx context.Context, mq queue.MessageQueue) (int64, error) {
	addr, err := s.inst.brokerAddr(ctx, mq.BrokerName)
	if err != nil {
		return 0, err
	}
	h := protocol.QueryConsumerOffsetRequestHeader{ConsumerGroup: s.group, Topic: mq.Topic, QueueID: mq.QueueID, BrokerName: mq.BrokerName}
	resp, err := s.inst.invoke(ctx, addr, protocol.NewRequest(protocol.ReqQueryConsumerOffset, h.Encode(), nil))
	if err != nil {
		return 0, transportError("query offset of "+mq.String(), mq.BrokerName, addr, err)
	}
	switch resp.Code {
	case protocol.RespSuccess:
		var rh protocol.QueryConsumerOffsetResponseHeader
		if err := rh.Decode(resp.ExtFields); err != nil {
			return 0, fmt.Errorf("client: query offset from %s (%s): %w", mq.BrokerName, addr, err)
		}
		return rh.Offset, nil
	case protocol.RespQueryNotFound:
		return offset.NoOffset, nil
	}
	return 0, brokerError("query offset of "+mq.String(), mq.BrokerName, addr, resp)
}

// Persist sends every in-memory offset of mqs oneway, as the official
// clients do every 5 s.
func (s *remoteStore) Persist(ctx context.Context, mqs []queue.MessageQueue) error {
	return s.persist(ctx, mqs, true)
}

// persistSync waits for each broker's answer: used on shutdown and when a
// queue is dropped, where the next owner must see the offset.
func (s *remoteStore) persistSync(ctx context.Context, mqs []queue.MessageQueue) error {
	return s.persist(ctx, mqs, false)
}

func (s *remoteStore) persist(ctx context.Context, mqs []queue.MessageQueue, oneway bool) error {
	var errs []error
	for _, mq := range mqs {
		off, ok := s.table.Get(mq)
		if !ok || off < 0 {
			continue
		}
		addr, err := s.inst.brokerAddr(ctx, mq.BrokerName)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		h := protocol.UpdateConsumerOffsetRequestHeader{ConsumerGroup: s.group, Topic: mq.Topic, QueueID: mq.QueueID, CommitOffset: off, BrokerName: mq.BrokerName}
		req := protocol.NewRequest(protocol.ReqUpdateConsumerOffset, h.Encode(), nil)
		if oneway {
			if err := s.inst.rc.InvokeOneway(ctx, addr, req); err != nil {
				errs = append(errs, transportError("update offset of "+mq.String(), mq.BrokerName, addr, err))
			}
			continue
		}
		resp, err := s.inst.invoke(ctx, addr, req)
		switch {
		case err != nil:
			errs = append(errs, transportError("update offset of "+mq.String(), mq.BrokerName, addr, err))
		case resp.Code != protocol.RespSuccess:
			errs = append(errs, brokerError("update offset of "+mq.String(), mq.BrokerName, addr, resp))
		}
	}
	return errors.Join(errs...)
}

func (s *remoteStore) Remove(mq queue.MessageQueue) { s.table.Remove(mq) }

func (s *remoteStore) Snapshot(topic string) map[queue.MessageQueue]int64 {
	return s.table.Snapshot(topic)
}
