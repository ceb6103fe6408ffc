package admin

import (
	"context"
	"errors"
	"fmt"

	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// DeleteGroup deletes a consumer group from every master of cluster (every
// cluster when ""), as mqadmin deleteSubGroup does: DELETE_SUBSCRIPTIONGROUP
// on each broker (with cleanOffset, its committed offsets go too), then its
// %RETRY% and %DLQ% topics wherever the name server routes them. It returns
// the brokers the group was deleted from and the topics deleted.
func (a *Admin) DeleteGroup(ctx context.Context, group, cluster string, cleanOffset bool) ([]Node, []string, error) {
	if err := checkName("group", group); err != nil {
		return nil, nil, err
	}
	op := fmt.Sprintf("delete group %q", group)
	info, err := a.ClusterInfo(ctx)
	if err != nil {
		return nil, nil, err
	}
	targets, err := masterRefs(info, cluster)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	req := protocol.NewRequest(protocol.ReqDeleteSubscriptionGroup,
		protocol.DeleteSubscriptionGroupRequestHeader{GroupName: group, CleanOffset: cleanOffset}.Encode(), nil)
	if done, err := a.callAll(ctx, op, targets, req); err != nil {
		return done, nil, err
	}
	var topics []string
	for _, t := range []string{queue.RetryGroupTopicPrefix + group, DLQTopic(group)} {
		if _, err := a.DeleteTopic(ctx, t, cluster); errors.Is(err, ErrNotFound) {
			continue
		} else if err != nil {
			return targets, topics, err
		}
		topics = append(topics, t)
	}
	return targets, topics, nil
}

// CloneGroupOffset copies src's committed offsets to dest on every master
// (mqadmin cloneGroupOffset): on topic, or every topic src has offsets on
// when topic is "". Unless offline, a broker skips a topic the online
// source group does not subscribe to.
func (a *Admin) CloneGroupOffset(ctx context.Context, src, dest, topic string, offline bool) ([]Node, error) {
	for _, g := range []struct{ what, name string }{{"source group", src}, {"destination group", dest}} {
		if err := checkName(g.what, g.name); err != nil {
			return nil, err
		}
	}
	op := fmt.Sprintf("clone offsets of group %q to %q", src, dest)
	info, err := a.ClusterInfo(ctx)
	if err != nil {
		return nil, err
	}
	targets, err := masterRefs(info, "")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	req := protocol.NewRequest(protocol.ReqCloneGroupOffset,
		protocol.CloneGroupOffsetRequestHeader{SrcGroup: src, DestGroup: dest, Topic: topic, Offline: offline}.Encode(), nil)
	return a.callAll(ctx, op, targets, req)
}
