package topicconf

import (
	"maps"
	"testing"
)

func TestMessageTypeOfATopic(t *testing.T) {
	var c Config
	if c.MessageType() != MessageTypeNormal {
		t.Fatalf("a topic without the attribute is %s, want NORMAL", c.MessageType())
	}
	c.Attributes = map[string]string{AttributeMessageType: "FIFO"}
	if c.MessageType() != MessageTypeFIFO {
		t.Fatalf("type %s", c.MessageType())
	}
	for _, tc := range []struct {
		topic, msg MessageType
		ok         bool
	}{
		{MessageTypeNormal, MessageTypeNormal, true}, {MessageTypeNormal, MessageTypeFIFO, false},
		{MessageTypeFIFO, MessageTypeFIFO, true}, {MessageTypeDelay, MessageTypeNormal, false},
		{MessageTypeMixed, MessageTypeTransaction, true}, {MessageTypeMixed, MessageTypeUnspecified, false},
		{MessageTypeUnspecified, MessageTypeUnspecified, false},
	} {
		if got := tc.topic.Accepts(tc.msg); got != tc.ok {
			t.Errorf("%s accepts %s: %v, want %v", tc.topic, tc.msg, got, tc.ok)
		}
	}
}

func TestAlterAttributes(t *testing.T) {
	cur := map[string]string{AttributeMessageType: "NORMAL"}
	got, err := AlterAttributes(cur, "+message.type=FIFO")
	if err != nil || !maps.Equal(got, map[string]string{AttributeMessageType: "FIFO"}) || cur[AttributeMessageType] != "NORMAL" {
		t.Fatalf("alter: %v, %v (current %v)", got, err, cur)
	}
	if got, err := AlterAttributes(cur, "-message.type"); err != nil || got != nil {
		t.Fatalf("delete: %v, %v", got, err)
	}
	if got, err := AlterAttributes(cur, ""); err != nil || !maps.Equal(got, cur) {
		t.Fatalf("no change: %v, %v", got, err)
	}
	for _, bad := range []string{"message.type=FIFO", "+message.type=fifo", "+queue.type=BatchCQ", "message.type",
		"+message.type=FIFO,+message.type=NORMAL", "+=x", "-", "+message.type=", ","} {
		if _, err := AlterAttributes(nil, bad); err == nil {
			t.Errorf("AlterAttributes(%q) accepted", bad)
		}
	}
}

func TestParseAttributeChanges(t *testing.T) {
	got, err := ParseAttributeChanges(" +a=b, -c ")
	if err != nil || !maps.Equal(got, map[string]string{"+a": "b", "-c": ""}) {
		t.Fatalf("parsed %v, %v", got, err)
	}
	if f := FormatAttributeChanges(got); f != "+a=b,-c" {
		t.Fatalf("formatted %q", f)
	}
	for _, bad := range []string{"a=b", "+a", "-a=b", "+=b", "+a=", "+a=1,+a=2", "x"} {
		if _, err := ParseAttributeChanges(bad); err == nil {
			t.Errorf("ParseAttributeChanges(%q) accepted", bad)
		}
	}
}
