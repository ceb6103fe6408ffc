package core

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/runnelmq/runnel/internal/fakeclock"
	"github.com/runnelmq/runnel/store"
	"github.com/runnelmq/runnel/topicconf"
)

// TestTopicMessageTypes: a topic's message.type is checked as the proxy
// checks a send (a topic without it is NORMAL, MIXED takes all); an
// unknown attribute is refused; a gRPC client's first use creates a
// MIXED topic, and an existing topic is left as it is.
func TestTopicMessageTypes(t *testing.T) {
	c := openCore(t, nil)
	plain := topicconf.New("Plain")
	fifo := topicconf.New("Fifo")
	fifo.Attributes = map[string]string{topicconf.AttributeMessageType: "FIFO"}
	for _, tc := range []topicconf.Config{plain, fifo} {
		if err := c.CreateTopic(tc, "test"); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.CheckMessageType("Plain", topicconf.MessageTypeNormal); err != nil {
		t.Fatal(err)
	}
	wantReason(t, c.CheckMessageType("Plain", topicconf.MessageTypeFIFO), MessageTypeMismatch)
	wantReason(t, c.CheckMessageType("Fifo", topicconf.MessageTypeNormal), MessageTypeMismatch)
	if err := c.CheckMessageType("Fifo", topicconf.MessageTypeFIFO); err != nil {
		t.Fatal(err)
	}
	wantReason(t, c.CheckMessageType("Nowhere", topicconf.MessageTypeNormal), TopicNotFound)
	bad := topicconf.New("Bad")
	bad.Attributes = map[string]string{"queue.type": "BatchCQ"}
	wantReason(t, c.CreateTopic(bad, "test"), InvalidArgument)

	tc, err := c.AutoCreateTopic("FirstUse", topicconf.MessageTypeMixed, "grpc")
	if err != nil || tc.MessageType() != topicconf.MessageTypeMixed || tc.WriteQueueNums != 4 {
		t.Fatalf("auto-created %+v, %v", tc, err)
	}
	for _, mt := range []topicconf.MessageType{topicconf.MessageTypeNormal, topicconf.MessageTypeFIFO,
		topicconf.MessageTypeDelay, topicconf.MessageTypeTransaction} {
		if err := c.CheckMessageType("FirstUse", mt); err != nil {
			t.Fatalf("%s to a MIXED topic: %v", mt, err)
		}
	}
	wantReason(t, c.CheckMessageType("FirstUse", topicconf.MessageTypeUnspecified), MessageTypeMismatch)
	if tc, err := c.AutoCreateTopic("Fifo", topicconf.MessageTypeMixed, "grpc"); err != nil || tc.MessageType() != topicconf.MessageTypeFIFO {
		t.Fatalf("an existing topic changed: %+v, %v", tc, err)
	}
	_, err = c.AutoCreateTopic("%RETRY%g", topicconf.MessageTypeMixed, "grpc")
	wantReason(t, err, ReservedName)
}

func TestAutoCreateTopicOffWhenAutoCreationIs(t *testing.T) {
	c := openCore(t, func(cfg *Config, _ *store.Options) { cfg.AutoCreateTopicEnable = false })
	_, err := c.AutoCreateTopic("FirstUse", topicconf.MessageTypeMixed, "grpc")
	wantReason(t, err, TopicNotFound)
}

// TestMessageTypeSurvivesRestart: a topic's message.type is kept in the
// store, and a topic stored without one reads as before (NORMAL).
func TestMessageTypeSurvivesRestart(t *testing.T) {
	fs, clock := vfs.NewMem(), fakeclock.Default()
	c := openCoreAt(t, fs, clock)
	fifo := topicconf.New("Fifo")
	fifo.Attributes = map[string]string{topicconf.AttributeMessageType: "FIFO"}
	if err := c.CreateTopic(fifo, "test"); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic(topicconf.New("Plain"), "test"); err != nil {
		t.Fatal(err)
	}
	closeCore(t, c)
	c = openCoreAt(t, fs, clock)
	defer closeCore(t, c)
	if tc, _ := c.Topic("Fifo"); tc.MessageType() != topicconf.MessageTypeFIFO {
		t.Fatalf("after restart Fifo is %s (%v)", tc.MessageType(), tc.Attributes)
	}
	if tc, _ := c.Topic("Plain"); tc.MessageType() != topicconf.MessageTypeNormal || tc.Attributes != nil {
		t.Fatalf("after restart Plain is %s (%v)", tc.MessageType(), tc.Attributes)
	}
}
