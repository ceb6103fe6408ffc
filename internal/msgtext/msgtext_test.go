package msgtext

import (
	"encoding/json"
	"testing"
)

func TestJSONBody(t *testing.T) {
	type record struct {
		Body       *string `json:"body,omitempty"`
		BodyBase64 []byte  `json:"bodyBase64,omitempty"`
	}
	for body, want := range map[string]string{
		"":           `{"body":""}`,
		"two\nlines": `{"body":"two\nlines"}`,
		"nul\x00":    `{"bodyBase64":"bnVsAA=="}`,
		"\xff\xfe":   `{"bodyBase64":"//4="}`,
	} {
		var r record
		r.Body, r.BodyBase64 = JSONBody([]byte(body))
		b, err := json.Marshal(r)
		if err != nil || string(b) != want {
			t.Errorf("JSONBody(%q): %s %v, want %s", body, b, err, want)
		}
	}
}
