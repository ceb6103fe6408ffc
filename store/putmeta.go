package store

import "github.com/runnelmq/runnel/topicconf"

// The store's metadata writes: consumer offsets, topic configs, delay-level
// progress and named checkpoints. Each is one Op through Apply (apply.go),
// as Put is for messages (put.go), so a replica applying the same Ops holds
// the same metadata; the reads of the same records are in query.go.

// CommitOffset stores a consumer group's offset for a queue.
func (s *Store) CommitOffset(group, topic string, queueID int32, offset int64) error {
	return s.CommitOffsets([]OffsetCommit{{Group: group, Topic: topic, QueueID: queueID, Offset: offset}})
}

// CommitOffsets stores any number of consumer offsets in one write (one
// sync): a broker's persist tick commits every changed offset at once.
// Committing none does nothing.
func (s *Store) CommitOffsets(offsets []OffsetCommit) error {
	if len(offsets) == 0 {
		return nil
	}
	_, err := s.Apply(&Op{Kind: OpCommitOffset, Offsets: offsets})
	return err
}

// DeleteConsumerOffsets forgets every offset of a group.
func (s *Store) DeleteConsumerOffsets(group string) error {
	_, err := s.Apply(&Op{Kind: OpDeleteGroupOffsets, Group: group})
	return err
}

// PutTopic creates or replaces a topic config.
func (s *Store) PutTopic(c topicconf.Config) error {
	_, err := s.Apply(&Op{Kind: OpPutTopic, TopicConfig: &c})
	return err
}

// DeleteTopic removes a topic's config and its consume queues (offsets
// restart at 0 if it is created again). Its log records stay until
// retention removes them.
func (s *Store) DeleteTopic(topic string) error {
	_, err := s.Apply(&Op{Kind: OpDeleteTopic, Topic: topic})
	return err
}

// SetDelayOffset records how far a delay level's queue has been delivered.
func (s *Store) SetDelayOffset(level int32, offset int64) error {
	_, err := s.Apply(&Op{Kind: OpSetDelayOffset, Level: level, Offset: offset})
	return err
}

// PutCheckpoint stores a named opaque value.
func (s *Store) PutCheckpoint(name string, value []byte) error {
	_, err := s.Apply(&Op{Kind: OpPutCheckpoint, Name: name, Value: value})
	return err
}
