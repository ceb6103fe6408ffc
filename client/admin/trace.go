package admin

import (
	"context"

	"github.com/runnelmq/runnel/client/trace"
)

// MessageTrace returns the trace records clients with tracing on wrote for
// the message whose client id (UNIQ_KEY) is id: its send (Pub) and, per
// consume, SubBefore and SubAfter, oldest first. Trace messages are found
// by that key on traceTopic (trace.Topic when ""), at most max of them
// (DefaultMaxMessages when 0). No trace topic fails with an error
// matching ErrNotFound; a topic without records of id returns none.
func (a *Admin) MessageTrace(ctx context.Context, id, traceTopic string, max int) ([]trace.Record, error) {
	if traceTopic == "" {
		traceTopic = trace.Topic
	}
	msgs, err := a.QueryMessageByKey(ctx, KeyQuery{Topic: traceTopic, Key: id, Max: max})
	if err != nil {
		return nil, err
	}
	bodies := make([]string, len(msgs))
	for i, m := range msgs {
		bodies[i] = string(m.Body)
	}
	return trace.Of(id, bodies), nil
}
