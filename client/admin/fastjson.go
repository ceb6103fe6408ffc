package admin

import (
	"encoding/json"
	"errors"
	"fmt"
)

// normalizeJSON rewrites the JSON dialects clients put in the bodies the
// broker forwards from them into standard JSON:
//   - object keys that are objects (fastjson's MessageQueue keys,
//     {{"topic":"T",...}:{...}}) or bare integers become JSON strings
//     holding their text;
//   - control characters inside strings are escaped (the official Go client
//     writes its goroutine dump into "jstack" unescaped).
//
// Everything else is copied as it is; json.Unmarshal judges the result.
func normalizeJSON(b []byte) ([]byte, error) {
	out := make([]byte, 0, len(b)+len(b)/8)
	var stack []byte // '{' or '[' per open container
	expectKey := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		inObject := len(stack) > 0 && stack[len(stack)-1] == '{'
		switch {
		case c == '"':
			end, err := appendString(&out, b, i)
			if err != nil {
				return nil, err
			}
			i = end - 1
			expectKey = false
		case inObject && expectKey && (c == '{' || c == '-' || (c >= '0' && c <= '9')):
			end := keyEnd(b, i)
			if end < 0 {
				return nil, errors.New("unterminated object key")
			}
			q, _ := json.Marshal(string(b[i:end]))
			out = append(out, q...)
			i = end - 1
			expectKey = false
		case c == '{' || c == '[':
			stack = append(stack, c)
			expectKey = c == '{'
			out = append(out, c)
		case c == '}' || c == ']':
			if len(stack) == 0 {
				return nil, fmt.Errorf("unbalanced %q at %d", c, i)
			}
			stack = stack[:len(stack)-1]
			expectKey = false
			out = append(out, c)
		case c == ',':
			expectKey = inObject
			out = append(out, c)
		default:
			if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
				expectKey = false
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// appendString copies the string starting at b[i] to out, escaping raw
// control characters, and returns the index just past it.
func appendString(out *[]byte, b []byte, i int) (int, error) {
	*out = append(*out, '"')
	for j := i + 1; j < len(b); j++ {
		c := b[j]
		switch {
		case c == '\\' && j+1 < len(b):
			*out = append(*out, c, b[j+1])
			j++
		case c == '"':
			*out = append(*out, c)
			return j + 1, nil
		case c < 0x20:
			*out = fmt.Appendf(*out, `\u%04x`, c)
		default:
			*out = append(*out, c)
		}
	}
	return -1, errors.New("unterminated string")
}

// keyEnd returns the index just past the object key starting at b[i]: a
// balanced object (strings inside skipped) or an integer; -1 if there is
// none.
func keyEnd(b []byte, i int) int {
	if b[i] != '{' {
		j := i + 1
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j
	}
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return j + 1
			}
		case '"':
			for j++; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
		}
	}
	return -1
}
