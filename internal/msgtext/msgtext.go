// Package msgtext owns the command-line tools' one rule for showing a
// message body: as text when it is valid UTF-8 of printable characters,
// tabs and line breaks, otherwise encoded (base64 in JSON, quoted on a
// terminal), so runnelctl and the consumer agree on what is text.
package msgtext

import (
	"unicode"
	"unicode/utf8"
)

// IsText reports whether body can be shown as text: valid UTF-8 of
// printable characters, tabs and line breaks.
func IsText(body []byte) bool {
	if !utf8.Valid(body) {
		return false
	}
	for _, r := range string(body) {
		if !unicode.IsPrint(r) && r != '\t' && r != '\n' && r != '\r' {
			return false
		}
	}
	return true
}

// JSONBody splits body for a JSON record's "body" and "bodyBase64": text,
// when IsText, or else the bytes (encoding/json writes a []byte in
// standard base64). Exactly one is set, so with omitempty the record has
// exactly one of the two.
func JSONBody(body []byte) (text *string, raw []byte) {
	if IsText(body) {
		s := string(body)
		return &s, nil
	}
	return nil, body
}
