package broker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func updateConfig(rc *rawClient, body string) *protocol.Command {
	rc.t.Helper()
	return rc.call(protocol.ReqUpdateBrokerConfig, nil, []byte(body))
}

func brokerConfig(t *testing.T, rc *rawClient) map[string]string {
	t.Helper()
	resp := rc.call(protocol.ReqGetBrokerConfig, nil, nil)
	expect(t, resp, protocol.RespSuccess, "")
	props, err := protocol.ParseProperties(string(resp.Body))
	if err != nil {
		t.Fatal(err)
	}
	return props
}

// TestUpdateBrokerConfig: UPDATE_BROKER_CONFIG changes the runtime keys
// at once (sends over the new maxMessageSize refused, timers beyond the
// new timerMaxDelaySec refused, pulls refused without read permission),
// GET_BROKER_CONFIG shows them, a restart keeps them; other keys, bad
// values and a body with one bad key change nothing.
func TestUpdateBrokerConfig(t *testing.T) {
	dir := t.TempDir()
	b := startBrokerAt(t, dir, nil)
	rc := newRawClient(t, b.Addr())
	rc.createTopic("RC", 1)
	big := strings.Repeat("x", 2000)
	expect(t, rc.send("RC", 0, "", big), protocol.RespSuccess, "")

	expect(t, updateConfig(rc, "maxMessageSize=1024\ntimerMaxDelaySec = 60\n"), protocol.RespSuccess, "")
	if c := brokerConfig(t, rc); c["maxMessageSize"] != "1024" || c["timerMaxDelaySec"] != "60" {
		t.Fatalf("config after the update: maxMessageSize %q timerMaxDelaySec %q", c["maxMessageSize"], c["timerMaxDelaySec"])
	}
	expect(t, rc.send("RC", 0, "", big), protocol.RespMessageIllegal, "msg body length limit 1024B")
	expect(t, rc.send("RC", 0, "", "small"), protocol.RespSuccess, "")
	timer := func(sec string) *protocol.Command {
		return rc.call(protocol.ReqSendMessage, sendHeader("RC", 0, map[string]string{protocol.PropertyTimerDelaySec: sec}).Encode(), []byte("t"))
	}
	expect(t, timer("120"), protocol.RespMessageIllegal, "")
	expect(t, timer("30"), protocol.RespSuccess, "")

	// Refusals change nothing, even beside a good key.
	expect(t, updateConfig(rc, "sendMessageThreadPoolNums=4"), protocol.RespInvalidParameter, `unknown broker config key "sendMessageThreadPoolNums"`)
	expect(t, updateConfig(rc, "maxMessageSize=2048\nbrokerName=other"), protocol.RespNoPermission, `"brokerName" cannot change at run time`)
	expect(t, updateConfig(rc, "maxMessageSize=abc"), protocol.RespInvalidParameter, "maxMessageSize")
	expect(t, updateConfig(rc, "maxMessageSize=999999999"), protocol.RespInvalidParameter, "set it in broker.conf and restart")
	expect(t, updateConfig(rc, "brokerPermission=9"), protocol.RespInvalidParameter, "brokerPermission")
	expect(t, updateConfig(rc, "not a property line"), protocol.RespInvalidParameter, "not key=value")
	if c := brokerConfig(t, rc); c["maxMessageSize"] != "1024" || c["brokerName"] != "broker-a" {
		t.Fatalf("a refused update changed the config: %v", c)
	}

	// Without write permission, ordered topics' sends (their producers
	// pick queues themselves) and send-backs are refused; others' routes
	// steer producers away (TestBrokerUpdateConfigCommand in runnelctl).
	expect(t, rc.call(protocol.ReqUpdateAndCreateTopic, protocol.CreateTopicRequestHeader{
		Topic: "ORD", DefaultTopic: "defaultTopic", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6,
		TopicFilterType: protocol.TopicFilterSingleTag, Order: true,
	}.Encode(), nil), protocol.RespSuccess, "")
	phys, offID := sendProps(t, rc, "RC", nil, "back")
	expect(t, updateConfig(rc, "brokerPermission=4"), protocol.RespSuccess, "")
	expect(t, rc.send("ORD", 0, "", "o"), protocol.RespNoPermission, "sending message is forbidden")
	expect(t, sendBack(rc, phys, "g", 0, 16, offID), protocol.RespNoPermission, "sending message is forbidden")
	expect(t, rc.send("RC", 0, "", "unordered"), protocol.RespSuccess, "")
	expect(t, pull(rc, "g", "RC"), protocol.RespSuccess, "")

	// Without read permission pulls are refused; with it back they pass.
	expect(t, updateConfig(rc, "brokerPermission=2"), protocol.RespSuccess, "")
	expect(t, rc.send("ORD", 0, "", "o"), protocol.RespSuccess, "")
	expect(t, pull(rc, "g", "RC"), protocol.RespNoPermission, "pulling message is forbidden")
	expect(t, updateConfig(rc, "brokerPermission=6"), protocol.RespSuccess, "")
	expect(t, pull(rc, "g", "RC"), protocol.RespSuccess, "")

	// A restart keeps the changes, from the store directory's file.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = startBrokerAt(t, dir, nil)
	rc = newRawClient(t, b.Addr())
	if c := brokerConfig(t, rc); c["maxMessageSize"] != "1024" || c["timerMaxDelaySec"] != "60" || c["brokerPermission"] != "6" {
		t.Fatalf("config after restart: %v", c)
	}
	expect(t, rc.send("RC", 0, "", big), protocol.RespMessageIllegal, "msg body length limit 1024B")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	// A runtime file with a key it may not hold stops the broker at New,
	// naming the file.
	if err := os.WriteFile(filepath.Join(dir, config.RuntimeConfigFile), []byte("brokerName=x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, dir)
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), config.RuntimeConfigFile) {
		t.Fatalf("New with a bad runtime file: %v", err)
	}
}
