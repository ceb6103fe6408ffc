package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/testnet"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
)

// assertFailed checks the CLI failure contract: exit code 1, nothing on
// stdout, one "runnelctl: " line on stderr containing want.
func assertFailed(t *testing.T, r result, want string) {
	t.Helper()
	if r.code != 1 {
		t.Fatalf("exit code %d, want 1 (stderr %q)", r.code, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("stdout %q, want nothing", r.stdout)
	}
	if !strings.HasPrefix(r.stderr, "runnelctl: ") || strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") {
		t.Errorf("stderr %q, want one line starting with runnelctl:", r.stderr)
	}
	if !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q does not contain %q", r.stderr, want)
	}
}

func TestErrorsAreOneLine(t *testing.T) {
	dead := testnet.DeadAddr(t)
	ns := startFakeNamesrv(t, javaClusterInfo, `{"topicList":[]}`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bogus"}, `unknown command "bogus"`},
		{[]string{"topic", "list", "--nope"}, "unknown flag: --nope"},
		{[]string{"topic", "create"}, "needs the topic name"},
		{[]string{"topic", "list", "-o", "yaml"}, `--output "yaml"`},
		{[]string{"topic", "list", "--namesrv", dead}, "name server " + dead},
		{[]string{"topic", "list", "--namesrv", "not-an-address"}, "NamesrvAddrs"},
		{[]string{"topic", "route", "nope", "--namesrv", ns.srv.Addr()}, "TOPIC_NOT_EXIST"},
		{[]string{"topic", "create", "a b", "--namesrv", ns.srv.Addr()}, "characters outside"},
		{[]string{"topic", "create", "t", "--perm", "Q"}, "--perm"},
		{[]string{"topic", "create", "t", "--queues", "2", "--read-queues", "3"}, "exclude each other"},
		{[]string{"send"}, "needs --topic"},
		{[]string{"send", "--topic", "t", "--delay", "-1"}, "delay level"},
		{[]string{"send", "--topic", "t", "--delay", "soon"}, "positive duration with a unit"},
		{[]string{"send", "--topic", "t", "--delay", "-5s"}, "positive duration with a unit"},
		{[]string{"send", "--topic", "t", "--delay", "9s", "--deliver-at", "2030-01-01"}, "exclude each other"},
		{[]string{"send", "--topic", "t", "--deliver-at", "90s"}, "for a delay use --delay 90s"},
		{[]string{"send", "--topic", "t", "--deliver-at", "tomorrow"}, "--deliver-at: time"},
		{[]string{"send", "--topic", "t", "--batch", "2", "--delay", "9s"}, "exclude each other"},
		{[]string{"group", "progress", "a", "--group", "b"}, `the argument "a" and --group "b" differ`},
		{[]string{"group", "progress", "--topic", "t"}, "--topic and --clients need a group"},
		{[]string{"group", "reset-offset", "--group", "g", "--topic", "t", "--to", "yesterday"}, `time "yesterday"`},
		{[]string{"group", "reset-offset", "--group", "g"}, "needs --topic"},
		{[]string{"message", "get"}, "needs the message id"},
		{[]string{"message", "get", "XYZ", "--namesrv", ns.srv.Addr()}, "want 32 hex digits"},
		{[]string{"message", "query", "--topic", "t"}, "needs --key"},
		{[]string{"message", "query", "--topic", "t", "--key", "k", "--begin", "soon"}, "--begin"},
		{[]string{"message", "recall", "--handle", "h"}, "needs --topic"},
		{[]string{"message", "recall", "--topic", "t"}, "needs --handle"},
		{[]string{"message", "recall", "--topic", "t", "--handle", "not-a-handle"}, "--handle: message: bad recall handle: not a version 1 handle"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			assertFailed(t, runCLI(t, nil, "", tc.args...), tc.want)
		})
	}
}

func TestNamesrvFromEnvAndFlag(t *testing.T) {
	ns := startFakeNamesrv(t, javaClusterInfo, `{"topicList":[]}`)
	env := map[string]string{"NAMESRV_ADDR": ns.srv.Addr()}
	r := runCLI(t, env, "", "broker", "list")
	if r.code != 0 {
		t.Fatalf("broker list: %+v", r)
	}
	want := "CLUSTER         BROKER    ID  ROLE    ADDRESS\n" +
		"DefaultCluster  broker-a  0   MASTER  10.0.0.1:10911\n" +
		"DefaultCluster  broker-a  1   SLAVE   10.0.0.2:10911\n"
	if r.stdout != want {
		t.Fatalf("stdout\n%s\nwant\n%s", r.stdout, want)
	}
	// --namesrv wins over the environment.
	dead := testnet.DeadAddr(t)
	assertFailed(t, runCLI(t, env, "", "broker", "list", "--namesrv", dead), dead)
	// Without either, the default address is used.
	r = runCLI(t, nil, "", "topic", "list", "--timeout", "200ms")
	if r.code == 0 {
		t.Skip("something answers on 127.0.0.1:9876 here")
	}
	assertFailed(t, r, admin.DefaultNamesrvAddr)
}

func TestJSONOutput(t *testing.T) {
	ns := startFakeNamesrv(t, javaClusterInfo,
		`{"topicList":["orders","%RETRY%g","TBW102","DefaultCluster","broker-a","audit","DefaultCluster_REPLY_TOPIC"]}`)
	env := map[string]string{"NAMESRV_ADDR": ns.srv.Addr()}

	r := runCLI(t, env, "", "broker", "list", "-o", "json")
	var brokers []admin.Broker
	if err := json.Unmarshal([]byte(r.stdout), &brokers); err != nil || len(brokers) != 2 || brokers[1].Addr != "10.0.0.2:10911" {
		t.Fatalf("broker list json %q: %v", r.stdout, err)
	}

	// The listed nodes do not exist: their state is left blank.
	r = runCLI(t, env, "", "cluster", "list", "-o", "json", "--timeout", "300ms")
	var clusters []clusterRow
	if err := json.Unmarshal([]byte(r.stdout), &clusters); err != nil {
		t.Fatal(err)
	}
	nodes := []clusterNode{
		{Broker: admin.Broker{Cluster: "DefaultCluster", Name: "broker-a", ID: 0, Addr: "10.0.0.1:10911"}, Role: "MASTER"},
		{Broker: admin.Broker{Cluster: "DefaultCluster", Name: "broker-a", ID: 1, Addr: "10.0.0.2:10911"}, Role: "SLAVE"},
	}
	if want := []clusterRow{{Cluster: "DefaultCluster", Brokers: []string{"broker-a"}, Masters: 1, Slaves: 1, Nodes: nodes}}; !reflect.DeepEqual(clusters, want) {
		t.Fatalf("clusters %+v", clusters)
	}

	// System, retry and cluster/broker-named topics are hidden by default.
	r = runCLI(t, env, "", "topic", "list")
	if r.stdout != "TOPIC\naudit\norders\n" {
		t.Fatalf("topic list %q", r.stdout)
	}
	r = runCLI(t, env, "", "topic", "list", "--all", "-o", "json")
	var topics []string
	if err := json.Unmarshal([]byte(r.stdout), &topics); err != nil || len(topics) != 7 {
		t.Fatalf("topic list --all %q: %v", r.stdout, err)
	}
}

// TestHelpEverywhere checks that every command of ours, the nouns included,
// documents itself with examples, and that --help works on each.
func TestHelpEverywhere(t *testing.T) {
	root := newRootCmd(&app{}, func(string) string { return "" })
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Name() == "completion" || c.Name() == "help" {
			return
		}
		if c.Example == "" {
			t.Errorf("%s has no examples", c.CommandPath())
		}
		args := append(strings.Fields(c.CommandPath())[1:], "--help")
		r := runCLI(t, nil, "", args...)
		if r.code != 0 || !strings.Contains(r.stdout, "Usage:") {
			t.Errorf("%v: %+v", args, r)
		}
		if !strings.Contains(r.stdout, "Examples:") {
			t.Errorf("%v: help has no examples", args)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		r := runCLI(t, nil, "", "completion", shell)
		if r.code != 0 || !strings.Contains(r.stdout, "runnelctl") {
			t.Errorf("completion %s: code %d, %d bytes", shell, r.code, len(r.stdout))
		}
	}
}

func TestParseTime(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	local := func(y int, mo time.Month, d, h, mi, s, ms int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ms*1e6, time.Local)
	}
	for in, want := range map[string]time.Time{
		"now":                       now,
		"1714557600000":             time.UnixMilli(1714557600000),
		"2024-05-01T10:00:00Z":      time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC),
		"2024-05-01T10:00:00+02:00": time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC),
		"2024-05-01 10:00:00":       local(2024, 5, 1, 10, 0, 0, 0),
		"2024-05-01T10:00:00":       local(2024, 5, 1, 10, 0, 0, 0),
		"2024-05-01#10:00:00:250":   local(2024, 5, 1, 10, 0, 0, 250),
		"2024-05-01":                local(2024, 5, 1, 0, 0, 0, 0),
	} {
		got, err := parseTime(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-5", "yesterday", "2024-13-01", "10:00"} {
		if _, err := parseTime(bad, now); err == nil {
			t.Errorf("parseTime(%q) succeeded", bad)
		}
	}
	for in, want := range map[string]admin.ResetPosition{"earliest": admin.ResetToEarliest, "LATEST": admin.ResetToLatest, "now": admin.ResetToTime} {
		got, err := parseResetTarget(in, now)
		if err != nil || got.Position != want {
			t.Errorf("parseResetTarget(%q) = %+v, %v", in, got, err)
		}
	}
	if _, err := parseResetTarget("", now); err == nil {
		t.Error("empty --to accepted")
	}
}

func TestParsePerm(t *testing.T) {
	for in, want := range map[string]int{"RW": 6, "rw": 6, "R": 4, "W": 2, "R-": 4, "RWX": 7, "6": 6, "4": 4} {
		got, err := parsePerm(in)
		if err != nil || got != want {
			t.Errorf("parsePerm(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-", "Q", "0", "16", "-1"} {
		if _, err := parsePerm(bad); err == nil {
			t.Errorf("parsePerm(%q) succeeded", bad)
		}
	}
}

func TestBodyRendering(t *testing.T) {
	if got := bodyText([]byte("héllo\tworld")); got != "héllo\tworld" {
		t.Errorf("printable body rendered %q", got)
	}
	if got := bodyText([]byte{0xff, 'a', 0}); got != `"\xffa\x00"` {
		t.Errorf("binary body rendered %q", got)
	}
	if got := preview("a\nb  c", 10); got != "a b c" {
		t.Errorf("preview %q", got)
	}
	if got := preview("abcdefghijkl", 5); got != "abcd…" {
		t.Errorf("preview %q", got)
	}
}

func TestSendStdinEdgeCases(t *testing.T) {
	// Nothing is sent before the first line, so no name server is needed
	// to see these errors.
	env := map[string]string{"NAMESRV_ADDR": testnet.DeadAddr(t)}
	assertFailed(t, runCLI(t, env, "\n\r\n", "send", "--topic", "t"), "no message to send")
	assertFailed(t, runCLI(t, env, "x\n", "send", "--topic", "t", "--timeout", "300ms"), "send message 1 to t")
}

func TestReadLinesStops(t *testing.T) {
	stop := make(chan struct{})
	lines, errc := readLines(strings.NewReader("a\r\n\nb\nc"), stop)
	if got := <-lines; got != "a" {
		t.Fatalf("first line %q", got)
	}
	close(stop) // the reader must exit although two lines are unread
	for range lines {
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	lines, errc = readLines(strings.NewReader("a\r\n\nb\nc"), make(chan struct{}))
	var got []string
	for l := range lines {
		got = append(got, l)
	}
	if strings.Join(got, ",") != "a,b,c" || <-errc != nil {
		t.Fatalf("lines %q", got)
	}
}
