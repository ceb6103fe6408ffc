package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/internal/testwait"
)

// TestMqadminAgainstCluster runs every mqadmin command, with mqadmin's own
// options, against a cluster, in the order a user would, and checks what
// each printed or changed.
func TestMqadminAgainstCluster(t *testing.T) {
	cl, env := onCluster(t)
	broker, addr := cl.BrokerName(0), cl.BrokerAddr(0)
	const topic, group = "mq-orders", "mq-billing"
	ran := map[string]bool{}
	mq := func(want string, args ...string) result {
		t.Helper()
		ran[args[0]] = true
		r := okRun(t, env, "", args...)
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("%s: stdout does not contain %q:\n%s", strings.Join(args, " "), want, r.stdout)
		}
		return r
	}

	mq("created", "updateTopic", "-c", "DefaultCluster", "-t", topic, "-r", "4", "-w", "4", "-o", "false", "-a", "+message.type=FIFO")
	assertFailed(t, runCLI(t, env, "", "updateTopic", "-c", "DefaultCluster", "-t", topic, "-a", "+message.type=LIFO"), `message.type="LIFO": want one of`)
	mq(topic, "topicList")
	mq("DefaultCluster  "+topic, "topicList", "-c")
	var route struct {
		QueueDatas []struct{ WriteQueueNums int } `json:"queueDatas"`
	}
	if err := json.Unmarshal([]byte(mq("queueDatas", "topicRoute", "-t", topic).stdout), &route); err != nil || route.QueueDatas[0].WriteQueueNums != 4 {
		t.Fatalf("topicRoute: %v %+v", err, route)
	}
	mq(broker, "topicRoute", "-t", topic, "-l")
	mq("TOTAL", "topicStatus", "-t", topic)
	mq("DefaultCluster", "topicClusterList", "-t", topic)
	mq("updated", "updateTopicPerm", "-c", "DefaultCluster", "-t", topic, "-p", "6")

	// A producer online, and a message on queue 1.
	prod := clitest.StartProducer(t, clitest.ProducerConfig(cl.NamesrvAddr(), "mq-test-producer", "mq-producers"))
	if _, err := prod.Send(context.Background(), &client.Message{Topic: topic, Body: []byte("warm")}); err != nil {
		t.Fatal(err)
	}
	// The producer's heartbeat, which registers it, runs beside its sends.
	testwait.For(t, testwait.Default, "the producer registered", func() bool {
		return runCLI(t, env, "", "producerConnection", "-g", "mq-producers", "-t", topic).code == 0
	})
	mq("mq-test-producer", "producerConnection", "-g", "mq-producers", "-t", topic)

	r := mq("", "sendMessage", "-t", topic, "-p", "hello", "-k", "k1", "-c", "TagA", "-b", broker, "-i", "1", "--output", "json")
	var sent sentRow
	if err := json.Unmarshal([]byte(r.stdout), &sent); err != nil || sent.QueueID != 1 || sent.Broker != broker {
		t.Fatalf("sendMessage -b -i 1: %v %+v", err, sent)
	}
	mq("hello", "queryMsgByKey", "-t", topic, "-k", "k1")
	mq("hello", "queryMsgById", "-i", sent.OffsetMsgID)
	mq(sent.OffsetMsgID, "queryMsgByUniqueKey", "-t", topic, "-i", sent.MsgID, "-a")
	mq("hello", "queryMsgByOffset", "-t", topic, "-b", broker, "-i", "1", "-o", itoa(int(sent.QueueOffset)))
	if r := mq("Topic:           "+topic, "printMsg", "-t", topic, "-s", "TagA", "-d", "false"); strings.Contains(r.stdout, "hello") || strings.Count(r.stdout, "Topic:") != 1 {
		t.Fatalf("printMsg -s TagA -d false:\n%s", r.stdout)
	}
	if r := mq("Topic:", "consumeMessage", "-t", topic, "-c", "1"); strings.Count(r.stdout, "Topic:") != 1 {
		t.Fatalf("consumeMessage -c 1:\n%s", r.stdout)
	}
	assertFailed(t, runCLI(t, env, "", "queryMsgTraceById", "-i", sent.MsgID), "no trace of message "+sent.MsgID)
	ran["queryMsgTraceById"] = true

	// A group configured the mqadmin way: booleans with values, -o its own.
	mq("updated", "updateSubGroup", "-c", "DefaultCluster", "-g", group, "-s", "false", "-o", "true", "-r", "3")
	g, ok := cl.Broker(0).Core().GroupConfig(group)
	if !ok || g.ConsumeEnable || g.RetryMaxTimes != 3 {
		t.Fatalf("after updateSubGroup: %+v %v", g, ok)
	}
	mq("retryMaxTimes", "getConsumerConfig", "-g", group)
	mq("updated", "updateSubGroup", "-c", "DefaultCluster", "-g", group, "-s", "true")

	// The group online.
	_, clientID, got := pushConsumer(t, cl.NamesrvAddr(), "mq-test-consumer", group, topic, 2)
	<-got
	mq(clientID, "consumerConnection", "-g", group)
	mq(clientID, "consumerStatus", "-g", group, "-i", clientID)
	testwait.For(t, testwait.Default, "the group online with its offsets committed", func() bool {
		var groups []groupProgress
		_ = json.Unmarshal([]byte(runCLI(t, env, "", "consumerProgress", "--output", "json").stdout), &groups)
		for _, g := range groups {
			if g.Group == group {
				return g.Consumers == 1 && g.Lag == 0
			}
		}
		return false
	})
	mq(group, "consumerProgress")
	mq(clientID, "consumerProgress", "-g", group, "-s", "true")
	mq("CR_SUCCESS", "queryMsgById", "-i", sent.OffsetMsgID, "-g", group, "-d", clientID)
	if r := mq(group, "statsAll", "-t", topic); !strings.Contains(r.stdout, "IN TPS") {
		t.Fatalf("statsAll:\n%s", r.stdout)
	}
	mq(topic+"  "+broker, "resetOffsetByTime", "-g", group, "-t", topic, "-s", "now")
	mq("cloned", "cloneGroupOffset", "-s", group, "-d", group+"-2", "-t", topic, "-o", "true")
	mq("deleted", "deleteSubGroup", "-c", "DefaultCluster", "-g", group+"-2", "-r", "true")

	// Brokers and clusters.
	mq(broker, "clusterList", "-c", "DefaultCluster")
	mq("brokerVersion", "brokerStatus", "-c", "DefaultCluster")
	mq("brokerClusterName", "getBrokerConfig", "-b", addr)
	mq("updated", "updateBrokerConfig", "-b", addr, "-k", "maxMessageSize", "-v", "1048576")
	mq(cl.NamesrvAddr(), "wipeWritePerm", "-b", broker)
	mq(cl.NamesrvAddr(), "addWritePerm", "-b", broker)
	mq("deleted", "deleteTopic", "-c", "DefaultCluster", "-t", topic)

	for _, spec := range mqadminCommands {
		if !ran[spec.name] {
			t.Errorf("%s was not run", spec.name)
		}
	}
}
