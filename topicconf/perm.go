package topicconf

// IsReadable reports whether perm allows consuming.
func IsReadable(perm int) bool { return perm&PermRead != 0 }

// IsWriteable reports whether perm allows producing.
func IsWriteable(perm int) bool { return perm&PermWrite != 0 }

// IsInherited reports whether perm lets new topics be created from this one.
func IsInherited(perm int) bool { return perm&PermInherit != 0 }

// PermString renders perm as RocketMQ's tools do: "RWX" with "-" for a
// missing bit (X standing for inherit).
func PermString(perm int) string {
	b := []byte("---")
	if IsReadable(perm) {
		b[0] = 'R'
	}
	if IsWriteable(perm) {
		b[1] = 'W'
	}
	if IsInherited(perm) {
		b[2] = 'X'
	}
	return string(b)
}

// DefaultTopic is the template topic producers' first sends auto-create
// topics from (RocketMQ TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC).
const DefaultTopic = "TBW102"

// DataVersion versions a broker's topic table; the name server re-reads the
// table only when the version changes (RocketMQ DataVersion). Equality is
// on all three fields, as in Java.
type DataVersion struct {
	Timestamp    int64 `json:"timestamp"`
	Counter      int64 `json:"counter"`
	StateVersion int64 `json:"stateVersion"`
}

// Next returns the version after v, stamped with the time nowMillis.
func (v DataVersion) Next(nowMillis int64) DataVersion {
	return DataVersion{Timestamp: nowMillis, Counter: v.Counter + 1, StateVersion: v.StateVersion}
}
