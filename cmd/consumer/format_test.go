package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/internal/msgtext"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func testMessage(body []byte) *client.MessageExt {
	m := &client.MessageExt{Queue: queue.MessageQueue{Topic: "orders", BrokerName: "broker-a", QueueID: 3}}
	m.Topic = "orders"
	m.QueueID = 3
	m.QueueOffset = 42
	m.MsgID = "7F0000010001"
	m.OffsetMsgID = "7F00000100002A9F0000000000000123"
	m.BornTimestamp = time.Date(2026, 11, 29, 8, 30, 0, 123e6, time.UTC).UnixMilli()
	m.StoreTimestamp = m.BornTimestamp + 2
	m.ReconsumeTimes = 1
	m.Properties = map[string]string{
		protocol.PropertyKeys: "order-1 order-2",
		protocol.PropertyTags: "TagA",
		"note":                "two words",
		"empty":               "",
	}
	m.Body = body
	return m
}

func TestIsText(t *testing.T) {
	for _, tc := range []struct {
		body       string
		text, line bool
	}{
		{"", true, true},
		{"hello world", true, true},
		{"héllo, 世界 ✓", true, true},
		{"tab\there", true, true},
		{"two\nlines", true, false},
		{"crlf\r\n", true, false},
		{"nul\x00", false, false},
		{"bell\a", false, false},
		{"\xff\xfe", false, false},
		{"\u2028", false, false}, // line separator: not printable
		{"\x1b[31mred", false, false},
	} {
		if got := msgtext.IsText([]byte(tc.body)); got != tc.text {
			t.Errorf("IsText(%q) = %v, want %v", tc.body, got, tc.text)
		}
		if got := isLineText([]byte(tc.body)); got != tc.line {
			t.Errorf("isLineText(%q) = %v, want %v", tc.body, got, tc.line)
		}
	}
}

func TestAppendTextPrintableBody(t *testing.T) {
	got := string(appendText(nil, testMessage([]byte("hello, 世界")), time.UTC))
	want := `topic=orders brokerName=broker-a queueId=3 queueOffset=42 msgId=7F0000010001 offsetMsgId=7F00000100002A9F0000000000000123
  keys=[order-1 order-2] tags=TagA reconsumeTimes=1 born=2026-11-29T08:30:00.123Z stored=2026-11-29T08:30:00.125Z
  properties: KEYS="order-1 order-2" TAGS=TagA empty="" note="two words"
  body (13 bytes): hello, 世界
`
	if got != want {
		t.Fatalf("text:\n%s\nwant:\n%s", got, want)
	}
}

func TestAppendTextEscapesBinaryAndMultiLineBodies(t *testing.T) {
	for _, tc := range []struct {
		body, line string
	}{
		{"\x00\x01\xff", `  body (3 bytes, quoted): "\x00\x01\xff"`},
		{"a\nb", `  body (3 bytes, quoted): "a\nb"`},
		{"\x1b[2J", `  body (4 bytes, quoted): "\x1b[2J"`},
		{"", `  body (0 bytes): `},
	} {
		out := string(appendText(nil, testMessage([]byte(tc.body)), time.UTC))
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 4 {
			t.Fatalf("body %q: %d lines, want 4:\n%s", tc.body, len(lines), out)
		}
		if lines[3] != tc.line {
			t.Errorf("body %q: last line %q, want %q", tc.body, lines[3], tc.line)
		}
	}
}

func TestAppendTextWithoutKeysTagsOrTimes(t *testing.T) {
	m := testMessage([]byte("x"))
	m.Properties = nil
	m.BornTimestamp, m.StoreTimestamp = 0, 0
	out := string(appendText(nil, m, time.UTC))
	if !strings.Contains(out, "\n  keys=[] tags=\"\" reconsumeTimes=1 born=- stored=-\n  properties:\n") {
		t.Fatalf("text:\n%s", out)
	}
}

// decodeRecord parses one JSON line into a generic map, as a script would.
func decodeRecord(t *testing.T, line []byte) map[string]any {
	t.Helper()
	if !bytes.HasSuffix(line, []byte("\n")) || bytes.Count(line, []byte("\n")) != 1 {
		t.Fatalf("not one line: %q", line)
	}
	var v map[string]any
	if err := json.Unmarshal(line, &v); err != nil {
		t.Fatalf("bad JSON %q: %v", line, err)
	}
	return v
}

func TestAppendJSONShape(t *testing.T) {
	line, err := appendJSON(nil, testMessage([]byte("two\nlines é")))
	if err != nil {
		t.Fatal(err)
	}
	v := decodeRecord(t, line)
	want := map[string]any{
		"topic":          "orders",
		"brokerName":     "broker-a",
		"queueId":        float64(3),
		"queueOffset":    float64(42),
		"msgId":          "7F0000010001",
		"offsetMsgId":    "7F00000100002A9F0000000000000123",
		"keys":           []any{"order-1", "order-2"},
		"tags":           "TagA",
		"properties":     map[string]any{"KEYS": "order-1 order-2", "TAGS": "TagA", "note": "two words", "empty": ""},
		"bornTimestamp":  float64(time.Date(2026, 11, 29, 8, 30, 0, 123e6, time.UTC).UnixMilli()),
		"storeTimestamp": float64(time.Date(2026, 11, 29, 8, 30, 0, 125e6, time.UTC).UnixMilli()),
		"reconsumeTimes": float64(1),
		"bodySize":       float64(12),
		"body":           "two\nlines é",
	}
	if len(v) != len(want) {
		t.Errorf("fields %v, want %v", keysOf(v), keysOf(want))
	}
	for k, w := range want {
		if g, ok := v[k]; !ok {
			t.Errorf("field %s missing", k)
		} else if gj, wj := mustJSON(t, g), mustJSON(t, w); gj != wj {
			t.Errorf("field %s = %s, want %s", k, gj, wj)
		}
	}
}

func TestAppendJSONBinaryBodyIsBase64(t *testing.T) {
	body := []byte{0, 1, 2, 0xff, 'a'}
	line, err := appendJSON(nil, testMessage(body))
	if err != nil {
		t.Fatal(err)
	}
	v := decodeRecord(t, line)
	if _, ok := v["body"]; ok {
		t.Fatalf("binary body also written as body: %s", line)
	}
	got, err := base64.StdEncoding.DecodeString(v["bodyBase64"].(string))
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("bodyBase64 %v decodes to %v (%v), want %v", v["bodyBase64"], got, err, body)
	}
}

func TestAppendJSONEmptyMessageHasArraysNotNull(t *testing.T) {
	m := testMessage(nil)
	m.Properties = nil
	line, err := appendJSON(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	s := string(line)
	for _, want := range []string{`"keys":[]`, `"properties":{}`, `"body":""`, `"tags":""`} {
		if !strings.Contains(s, want) {
			t.Errorf("%s lacks %s", s, want)
		}
	}
	if strings.Contains(s, "bodyBase64") {
		t.Errorf("%s has bodyBase64 for an empty body", s)
	}
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
