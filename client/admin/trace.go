package admin

import (
	"context"

	"github.com/runnelmq/runnel/client/trace"
)

// MessageTrace returns the trace records clients with tracing on wrote for
// the message whose client id (UNIQ_KEY) is q.Key: its send (Pub) and, per
// consume, SubBefore and SubAfter, oldest first. Trace messages are found
// by that key on q.Topic (trace.Topic when ""), within q's store times, at
// most q.Max of them (DefaultMaxMessages when 0). No trace topic fails
// with an error matching ErrNotFound; a topic without records of the
// message returns none.
func (a *Admin) MessageTrace(ctx context.Context, q KeyQuery) ([]trace.Record, error) {
	if q.Topic == "" {
		q.Topic = trace.Topic
	}
	msgs, err := a.QueryMessageByKey(ctx, q)
	if err != nil {
		return nil, err
	}
	bodies := make([]string, len(msgs))
	for i, m := range msgs {
		bodies[i] = string(m.Body)
	}
	return trace.Of(q.Key, bodies), nil
}
