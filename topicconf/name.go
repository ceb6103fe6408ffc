package topicconf

// ValidName reports whether every byte of name is in RocketMQ's alphabet of
// topic and group names, ^[%|a-zA-Z0-9_-]+$ (TopicValidator). Emptiness and
// the length limits (127 for a topic, 255 for a group) are the caller's:
// they differ by kind and each side words its own refusal. A byte loop, not
// a regexp: the client checks the topic of every message it sends.
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !validNameByte(name[i]) {
			return false
		}
	}
	return true
}

func validNameByte(ch byte) bool {
	return ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' ||
		ch == '%' || ch == '|' || ch == '_' || ch == '-'
}
