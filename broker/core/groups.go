package core

import (
	"fmt"
	"slices"

	"github.com/runnelmq/runnel/broker/clients"
	"github.com/runnelmq/runnel/broker/offsets"
	"github.com/runnelmq/runnel/store"
)

// A consumer group exists here once it sent a heartbeat or committed an
// offset, or an admin configured it (subgroups.go).

// DeleteGroup deletes a consumer group (DELETE_SUBSCRIPTIONGROUP, mqadmin
// deleteSubGroup): its stored config, and with cleanOffset its committed
// offsets too, from memory and the store, so the group is no longer listed
// once its last consumer leaves. Its %RETRY% and %DLQ% topics are the
// tools' to delete, as Java's are.
func (c *Core) DeleteGroup(group string, cleanOffset bool) error {
	if remark, ok := checkGroupName(group); !ok {
		return refuse(InvalidName, remark)
	}
	if had, err := c.groups.remove(group); err != nil {
		return fmt.Errorf("core: delete subscription group %s: %w", group, err)
	} else if had {
		c.log.Info("broker: subscription group config deleted", "group", group)
	}
	if !cleanOffset {
		return nil
	}
	c.offsets.DropGroup(group)
	if err := c.apply(&store.Op{Kind: store.OpDeleteGroupOffsets, Group: group}); err != nil {
		return fmt.Errorf("core: delete offsets of group %s: %w", group, err)
	}
	c.log.Info("broker: consumer group deleted", "group", group)
	return nil
}

// CloneGroupOffsets copies src's committed offsets to dest
// (CLONE_GROUP_OFFSET, mqadmin cloneGroupOffset), on topic or, when topic
// is "", on every topic src has offsets on. Unless offline, a topic the
// online source group does not subscribe to is skipped, as Java skips it.
// It returns the topics cloned.
func (c *Core) CloneGroupOffsets(src, dest, topic string, offline bool) ([]string, error) {
	for _, g := range []string{src, dest} {
		if remark, ok := checkGroupName(g); !ok {
			return nil, refuse(InvalidName, remark)
		}
	}
	topics := []string{topic}
	if topic == "" {
		topics = topicsOfGroup(c.offsets.Group(src, ""))
	}
	var cloned []string
	for _, t := range topics {
		if _, ok := c.topics.get(t); !ok {
			continue
		}
		if !offline {
			if g, ok := c.clients.Group(src); ok && len(g.Subscriptions) > 0 &&
				!slices.ContainsFunc(g.Subscriptions, func(s clients.Subscription) bool { return s.Topic == t }) {
				continue
			}
		}
		for _, e := range c.offsets.Group(src, t) {
			c.offsets.Commit(offsets.Key{Group: dest, Topic: t, QueueID: e.QueueID}, e.Offset)
		}
		cloned = append(cloned, t)
	}
	return cloned, nil
}
