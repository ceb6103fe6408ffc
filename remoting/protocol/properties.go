package protocol

import (
	"bufio"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Java properties text, the body of GET_BROKER_CONFIG's answer and of
// UPDATE_BROKER_CONFIG, and broker.conf's syntax: one key=value (or
// key: value, the first '=' or ':' separating) a line, blank lines and
// lines starting with '#' or '!' ignored, keys and values trimmed. The
// escapes and continuation lines of java.util.Properties are not used by
// brokers' keys and are kept as they are.

// ParseProperties reads properties text; a line with no separator is an
// error naming it.
func ParseProperties(text string) (map[string]string, error) {
	props := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			return nil, fmt.Errorf("protocol: properties line %d: %q is not key=value", n, line)
		}
		props[strings.TrimSpace(line[:i])] = strings.TrimSpace(line[i+1:])
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("protocol: properties: %w", err)
	}
	return props, nil
}

// FormatProperties writes props sorted by key, one key=value a line.
func FormatProperties(props map[string]string) string {
	var sb strings.Builder
	for _, k := range slices.Sorted(maps.Keys(props)) {
		fmt.Fprintf(&sb, "%s=%s\n", k, props[k])
	}
	return sb.String()
}
