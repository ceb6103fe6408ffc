package admin

import (
	"errors"
	"maps"
	"testing"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// deadLetter is a dead letter as the broker's send-back stores it.
func deadLetter(props map[string]string) *protocol.MessageExt {
	return &protocol.MessageExt{Message: protocol.Message{Topic: "%DLQ%g", Properties: props}, OffsetMsgID: "7F00000100002A9F0000000000000C4E"}
}

func TestResendPropertiesKeepUserDropBookkeeping(t *testing.T) {
	m := deadLetter(map[string]string{
		"TAGS": "created", "KEYS": "order-1 order-2", "color": "red", "WAIT": "true",
		"RETRY_TOPIC": "orders", "ORIGIN_MESSAGE_ID": "AC", "RECONSUME_TIME": "2", "MAX_RECONSUME_TIMES": "1",
		"REAL_TOPIC": "%RETRY%g", "REAL_QID": "0", "DELAY": "3", "UNIQ_KEY": "0A0B", "CONSUME_START_TIME": "1",
		"TRAN_MSG": "true", "PGROUP": "pg", "__transactionId__": "x", "TIMER_DELIVER_MS": "5", "MIN_OFFSET": "0", "MAX_OFFSET": "9",
	})
	before := maps.Clone(m.Properties)
	got := ResendProperties(m)
	want := map[string]string{"TAGS": "created", "KEYS": "order-1 order-2", "color": "red", "WAIT": "true"}
	if !maps.Equal(got, want) {
		t.Fatalf("resend properties %v, want %v", got, want)
	}
	if !maps.Equal(m.Properties, before) {
		t.Fatalf("the dead letter's own properties changed: %v", m.Properties)
	}
	if got := ResendProperties(deadLetter(nil)); got == nil || len(got) != 0 {
		t.Fatalf("no properties: %v", got)
	}
}

func TestDeadLetterOrigin(t *testing.T) {
	if topic, err := DeadLetterOrigin(deadLetter(map[string]string{"RETRY_TOPIC": "orders"})); err != nil || topic != "orders" {
		t.Fatalf("origin %q, %v", topic, err)
	}
	for _, props := range []map[string]string{nil, {"RETRY_TOPIC": "%RETRY%g"}, {"RETRY_TOPIC": "%DLQ%g"}} {
		if _, err := DeadLetterOrigin(deadLetter(props)); !errors.Is(err, ErrBadArgument) {
			t.Errorf("origin of %v: %v, want ErrBadArgument", props, err)
		}
	}
	if DLQTopic("billing") != "%DLQ%billing" {
		t.Fatal(DLQTopic("billing"))
	}
}
