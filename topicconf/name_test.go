package topicconf

import (
	"regexp"
	"testing"
)

// TestValidNameMatchesRocketMQPattern checks the byte loop against Java's
// TopicValidator pattern over every single byte and some whole names.
func TestValidNameMatchesRocketMQPattern(t *testing.T) {
	pattern := regexp.MustCompile(`^[%|a-zA-Z0-9_-]+$`)
	names := []string{"", "T", "%RETRY%g1", "a|b", "a-b_c", "a b", "a.b", "ä", "a\x00", "TBW102", "topic/x", "+"}
	for c := 0; c < 256; c++ {
		names = append(names, string([]byte{byte(c)}), "ok"+string([]byte{byte(c)}))
	}
	for _, n := range names {
		if got, want := ValidName(n), pattern.MatchString(n); got != want {
			t.Errorf("ValidName(%q) = %v, pattern says %v", n, got, want)
		}
	}
}
