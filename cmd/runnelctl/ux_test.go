package main

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/internal/clitest"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// okRun runs runnelctl in-process and fails unless it exits 0.
func okRun(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	r := runCLI(t, env, stdin, args...)
	if r.code != 0 {
		t.Fatalf("runnelctl %s: exit %d\nstderr: %s\nstdout: %s", strings.Join(args, " "), r.code, r.stderr, r.stdout)
	}
	return r
}

// TestFirstHourAgainstCluster walks the surprises of issue 16 against a
// real in-process cluster: each step fails without its fix.
func TestFirstHourAgainstCluster(t *testing.T) {
	cl, env := onCluster(t)

	// A fresh cluster: no topics, and a hint about --all instead of silence.
	r := okRun(t, env, "", "topic", "list")
	if r.stdout != "" || !strings.Contains(r.stderr, "--all") {
		t.Fatalf("topic list on a fresh cluster: %+v", r)
	}

	// -n is the name server, as in mqadmin.
	okRun(t, nil, "", "-n", cl.NamesrvAddr(), "broker", "list")

	// Create, then update only the perm: the queue counts stay 4, and the
	// second write says "updated".
	if r := okRun(t, env, "", "topic", "create", "orders", "--queues", "4"); !strings.Contains(r.stdout, "created") {
		t.Fatalf("create: %s", r.stdout)
	}
	if r := okRun(t, env, "", "topic", "create", "orders", "--perm", "RW"); !strings.Contains(r.stdout, "updated") || strings.Contains(r.stdout, "created") {
		t.Fatalf("update: %s", r.stdout)
	}
	route := func() protocol.QueueData {
		t.Helper()
		var rd protocol.TopicRouteData
		if err := json.Unmarshal([]byte(okRun(t, env, "", "topic", "route", "orders", "-o", "json").stdout), &rd); err != nil || len(rd.QueueDatas) != 1 {
			t.Fatalf("route: %v %+v", err, rd)
		}
		return rd.QueueDatas[0]
	}
	if q := route(); q.ReadQueueNums != 4 || q.WriteQueueNums != 4 || q.Perm != 6 {
		t.Fatalf("after an update with only --perm: %+v, want 4/4 RW", q)
	}
	// updateTopicPerm (mqadmin name) changes the perm alone.
	okRun(t, env, "", "updateTopicPerm", "-t", "orders", "-p", "R")
	if q := route(); q.ReadQueueNums != 4 || q.Perm != protocol.PermRead {
		t.Fatalf("after update-perm R: %+v", q)
	}
	okRun(t, env, "", "topic", "update-perm", "orders", "-p", "RW")

	// Numeric flags and ranges are explained without strconv.
	assertFailed(t, runCLI(t, env, "", "topic", "create", "t", "--queues", "abc"), `--queues "abc": want a whole number`)
	if r := runCLI(t, env, "", "topic", "create", "t", "--queues", "abc"); strings.Contains(r.stderr, "strconv") {
		t.Fatalf("strconv leaks: %s", r.stderr)
	}
	assertFailed(t, runCLI(t, env, "", "topic", "create", "t", "--queues", "-1"), "--queues -1: want 1..1024")

	// Deleting what is not there fails; on a terminal a delete asks.
	assertFailed(t, runCLI(t, env, "", "topic", "delete", "nosuch"), "topic nosuch does not exist")
	old := isTerminal
	isTerminal = func(any) bool { return true }
	r = runCLI(t, env, "n\n", "topic", "delete", "orders")
	isTerminal = old
	if r.code != 1 || !strings.Contains(r.stderr, "Delete topic orders") || !strings.Contains(r.stderr, "aborted") {
		t.Fatalf("delete answered no: %+v", r)
	}
	route() // still there

	// send: rows, a summary, --quiet, --batch.
	r = okRun(t, env, "", "send", "--topic", "orders", "-o", "json", "hello")
	if !strings.HasPrefix(r.stderr, "sent 1 in ") || !strings.Contains(r.stderr, "msg/s") {
		t.Fatalf("send summary: %q", r.stderr)
	}
	var sent sentRow
	if err := json.Unmarshal([]byte(r.stdout), &sent); err != nil {
		t.Fatal(err)
	}
	r = okRun(t, env, "a\nb\nc\nd\ne\n", "send", "--topic", "orders", "--batch", "2", "--quiet")
	if r.stdout != "" || !strings.HasPrefix(r.stderr, "sent 5 in ") {
		t.Fatalf("send --batch 2 --quiet: %+v", r)
	}
	// On a terminal, --quiet still shows progress, erased before the summary.
	oldTerm, oldEvery := isTerminal, progressEvery
	isTerminal, progressEvery = func(any) bool { return true }, 0
	r = runCLI(t, env, "1\n2\n3\n", "send", "--topic", "orders", "--quiet")
	isTerminal, progressEvery = oldTerm, oldEvery
	if r.code != 0 || !strings.Contains(r.stderr, "\r\x1b[Ksent 2 ...") || !strings.Contains(r.stderr, "\r\x1b[Ksent 3 in ") {
		t.Fatalf("send progress on a terminal: %+v", r)
	}
	if r := okRun(t, env, "", "send", "--topic", "orders", "x"); !strings.Contains(r.stdout, "QUEUE  OFFSET\n") && !strings.Contains(r.stdout, " OFFSET\n") {
		t.Fatalf("send header: %q", r.stdout)
	}
	if r := okRun(t, env, "", "send", "--help"); strings.Contains(r.stdout, "--keys message query") {
		t.Fatalf("send help names a value 'message query':\n%s", r.stdout)
	}

	// message get with the client id send printed, without --topic.
	r = okRun(t, env, "", "message", "get", sent.MsgID, "-o", "json")
	var got messageView
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got.Body == nil || *got.Body != "hello" || got.Topic != "orders" {
		t.Fatalf("message get %s: %v %+v", sent.MsgID, err, got)
	}

	// printMsg / queryMsgByOffset by pull.
	r = okRun(t, env, "", "queryMsgByOffset", "-t", "orders", "-b", sent.Broker, "-i", itoa(int(sent.QueueID)), "-o", itoa(int(sent.QueueOffset)))
	if !strings.Contains(r.stdout, "hello") {
		t.Fatalf("queryMsgByOffset:\n%s", r.stdout)
	}

	// brokerStatus, getBrokerConfig, statsAll, topic consumers.
	if r := okRun(t, env, "", "brokerStatus", "-b", cl.BrokerAddr(0)); !strings.Contains(r.stdout, "brokerVersion") {
		t.Fatalf("brokerStatus:\n%s", r.stdout)
	}
	if r := okRun(t, env, "", "getBrokerConfig", "-b", cl.BrokerAddr(0)); !strings.Contains(r.stdout, "brokerClusterName") {
		t.Fatalf("getBrokerConfig:\n%s", r.stdout)
	}
	assertFailed(t, runCLI(t, env, "", "group", "reset-offset", "--group", "biling", "--topic", "orders", "--to", "15m"), "group biling is not known to any broker")
	okRun(t, env, "", "group", "reset-offset", "--group", "billing", "--topic", "orders", "--to", "15m", "--create")
	okRun(t, env, "", "group", "reset-offset", "--group", "billing", "--topic", "orders", "--to", "earliest")
	// group progress takes its group as topic stats takes its topic.
	if r := okRun(t, env, "", "group", "progress", "billing"); !strings.Contains(r.stdout, "TOTAL") {
		t.Fatalf("group progress billing:\n%s", r.stdout)
	}
	if r := okRun(t, env, "", "topic", "consumers", "orders"); !strings.Contains(r.stdout, "billing") {
		t.Fatalf("topic consumers:\n%s", r.stdout)
	}
	if r := okRun(t, env, "", "statsAll"); !strings.Contains(r.stdout, "orders") || !strings.Contains(r.stdout, "billing") {
		t.Fatalf("statsAll:\n%s", r.stdout)
	}

	// producerConnection: a producer of our client is online, with its
	// version by RocketMQ's name.
	prod := clitest.StartProducer(t, clitest.ProducerConfig(cl.NamesrvAddr(), "ux-test-producer", "order-service"))
	if _, err := prod.Send(context.Background(), &client.Message{Topic: "orders", Body: []byte("from a producer")}); err != nil {
		t.Fatal(err)
	}
	r = okRun(t, env, "", "producerConnection", "-g", "order-service", "-t", "orders")
	_ = prod.Shutdown(context.Background())
	if !strings.Contains(r.stdout, "ux-test-producer") || !strings.Contains(r.stdout, protocol.VersionName(int(protocol.Version))) {
		t.Fatalf("producerConnection:\n%s", r.stdout)
	}

	// Dynamic completion asks the cluster.
	if r := okRun(t, env, "", "__complete", "topic", "route", ""); !strings.Contains(r.stdout, "orders\n") {
		t.Fatalf("topic completion:\n%s", r.stdout)
	}
	if r := okRun(t, env, "", "__complete", "group", "progress", "--group", "bi"); !strings.Contains(r.stdout, "billing\n") {
		t.Fatalf("group completion:\n%s", r.stdout)
	}

	// And now the delete, confirmed for a script.
	if r := okRun(t, env, "", "topic", "delete", "orders", "--yes"); !strings.Contains(r.stdout, "deleted") {
		t.Fatalf("delete --yes: %s", r.stdout)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestUnknownCommandsFail(t *testing.T) {
	assertFailed(t, runCLI(t, nil, "", "topic", "frobnicate"), `unknown command "frobnicate" for "runnelctl topic"`)
	r := runCLI(t, nil, "", "topc")
	assertFailed(t, r, `unknown command "topc" for "runnelctl" (did you mean topic?)`)
	if strings.Contains(r.stderr, "; ;") {
		t.Fatalf("suggestion formatting: %q", r.stderr)
	}
	// The hidden mqadmin aliases do not widen the command list.
	if r := runCLI(t, nil, "", "--help"); !strings.Contains(r.stdout, "\n  broker      Brokers known") {
		t.Fatalf("root help:\n%s", r.stdout)
	}
	// A group command alone still shows its help.
	if r := runCLI(t, nil, "", "topic"); r.code != 0 || !strings.Contains(r.stdout, "Available Commands") {
		t.Fatalf("topic alone: %+v", r)
	}
}

func TestVersion(t *testing.T) {
	r := runCLI(t, nil, "", "--version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "runnel ") || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("--version: %+v", r)
	}
}

// A server that never answers is named with the time it had; an HTTP
// server is called not RocketMQ, not "frame too large".
func TestTransportErrorsInUserTerms(t *testing.T) {
	silent := clitest.SilentServer(t)
	r := runCLI(t, nil, "", "topic", "list", "-n", silent, "--timeout", "300ms")
	assertFailed(t, r, "no answer from name server "+silent+" within 300ms")

	// What an HTTP server answers to bytes that are not HTTP.
	h, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	go func() { // ends with h.Close; each answer closes its conn
		for {
			c, err := h.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = c.Read(make([]byte, 512))
				_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n400 Bad Request"))
			}()
		}
	}()
	addr := h.Addr().String()
	assertFailed(t, runCLI(t, nil, "", "topic", "list", "-n", addr, "--timeout", "2s"), addr+" is not a RocketMQ name server or broker")
}

// group consumers names client versions as RocketMQ does (mqadmin
// consumerConnection prints V4_9_4, not 401).
func TestConsumersShowVersionNames(t *testing.T) {
	var out strings.Builder
	cc := &admin.ConsumerConnection{Group: "g", Clients: []admin.ConsumerClient{{ClientID: "c1", Version: 401, Brokers: []string{"broker-a"}}}}
	if err := printConsumers(&out, consumersOutput{ConsumerConnection: cc}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), " V4_9_4 ") || strings.Contains(out.String(), " 401 ") {
		t.Fatalf("group consumers:\n%s", out.String())
	}
}
