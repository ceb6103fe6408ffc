package core

import (
	"github.com/runnelmq/runnel/message"
	"github.com/runnelmq/runnel/store"
)

// SendOutcome is what became of one request of SendAll: its result, or
// the error Send would have returned for it alone.
type SendOutcome struct {
	Result SendResult
	Err    error
}

// SendAll stores independent sends (of any producers, topics and queues)
// in one store write, where Send would make one write each: the sends a
// connection delivered together, so that they share one commit, one wait
// for it to be durable and, in a replicated group, one log entry.
//
// Each request is checked and rewritten alone, exactly as Send does, and
// one refused gets Send's error for it while the rest go on. The accepted
// ones are stored in the order given, so a producer's sends to one queue
// keep their order. When the combined write is refused for one bad
// message (store.RefusedOp: a record too large, say), each is stored
// alone, so only the bad one fails; any other store failure is every
// accepted request's. The i-th outcome is rs[i]'s.
func (c *Core) SendAll(rs []SendRequest) []SendOutcome {
	out := make([]SendOutcome, len(rs))
	prepared := make([]preparedSend, len(rs))
	n, accepted := 0, 0
	for i := range rs {
		p, err := c.prepareSend(&rs[i])
		out[i] = SendOutcome{Err: err}
		if err == nil {
			prepared[i] = p
			n += len(p.msgs)
			accepted++
		}
	}
	if accepted == 0 {
		return out
	}
	msgs := make([]*message.MessageExt, 0, n)
	for i := range prepared {
		msgs = append(msgs, prepared[i].msgs...)
	}
	res, err := c.put(msgs)
	if err != nil && accepted > 1 && store.RefusedOp(err) {
		for i := range prepared {
			if out[i].Err == nil {
				out[i] = c.storePrepared(&prepared[i])
			}
		}
		return out
	}
	for i := range prepared {
		p := &prepared[i]
		if out[i].Err != nil {
			continue
		}
		if err != nil {
			out[i].Err = c.putError(err)
			continue
		}
		out[i].Result = p.result(res[:len(p.msgs)])
		res = res[len(p.msgs):]
	}
	return out
}

// storePrepared stores one prepared send alone.
func (c *Core) storePrepared(p *preparedSend) SendOutcome {
	res, err := c.put(p.msgs)
	if err != nil {
		return SendOutcome{Err: c.putError(err)}
	}
	return SendOutcome{Result: p.result(res)}
}
