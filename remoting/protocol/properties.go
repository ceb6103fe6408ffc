package protocol

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Java properties text, the body of GET_BROKER_CONFIG's answer and of
// UPDATE_BROKER_CONFIG, and broker.conf's syntax (ScanProperties is its
// one reader; broker/config's Config.ApplyProperties reads broker.conf through
// it): one key=value (or key: value, the first '=' or ':' separating) a
// line, blank lines and lines starting with '#' or '!' ignored, keys and
// values trimmed of white space, lines up to 4 MiB. The escapes and
// continuation lines of java.util.Properties are not used by brokers'
// keys: a backslash is kept as it is.

// ErrPropertiesSyntax is returned (wrapped, naming the line) for a line of
// properties text that is not key=value.
var ErrPropertiesSyntax = errors.New("protocol: properties syntax")

// maxPropertiesLine bounds one line; the whole text is not bounded.
const maxPropertiesLine = 4 << 20

// ScanProperties reads properties text from r and calls fn with each
// key=value line in order, numbered from 1; fn's error stops the scan and
// is returned as it is. A line that is not key=value is an
// ErrPropertiesSyntax naming it.
func ScanProperties(r io.Reader, fn func(line int, key, value string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxPropertiesLine)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			return fmt.Errorf("%w: line %d: %q is not key=value", ErrPropertiesSyntax, n, line)
		}
		if err := fn(n, strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+1:])); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("protocol: properties: %w", err)
	}
	return nil
}

// ParseProperties reads properties text into a map, a later line of a
// key replacing an earlier one.
func ParseProperties(text string) (map[string]string, error) {
	props := map[string]string{}
	err := ScanProperties(strings.NewReader(text), func(_ int, k, v string) error {
		props[k] = v
		return nil
	})
	if err != nil {
		return nil, err
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
