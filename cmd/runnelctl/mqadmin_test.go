package main

import (
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// translate parses args (an mqadmin command line) as runnelctl does, and
// returns the app it set and what the command asks for.
func translate(t *testing.T, args ...string) (*app, mqRun, error) {
	t.Helper()
	a := &app{stdout: io.Discard, stderr: io.Discard}
	root := newRootCmd(a, func(string) string { return "" }, args...)
	c, rest, err := root.Find(args)
	if err != nil || c == root {
		t.Fatalf("%v: no such command: %v", args, err)
	}
	spec := mqadminSpec(c.Name())
	if spec == nil {
		t.Fatalf("%s is not an mqadmin command", c.Name())
	}
	_, run, err := a.mqadminParse(c, spec, rest)
	return a, run, err
}

func mqadminSpec(name string) *mqCmd {
	for _, s := range mqadminCommands {
		if s.name == name {
			return s
		}
	}
	return nil
}

// TestMqadminTranslations is the table over every mqadmin command: given
// mqadmin's own options (letters and long names, booleans with a value)
// each becomes the runnelctl command line that does the same, and that
// line parses as runnelctl's own command; bad values and options runnelctl
// cannot honour are refused with a message naming them.
func TestMqadminTranslations(t *testing.T) {
	type lines = [][]string
	l := func(s ...string) lines { return lines{s} }
	for _, tc := range []struct {
		args []string
		want lines
		err  string // instead of want
	}{
		{args: []string{"clusterList", "-c", "DefaultCluster", "-m"}, want: l("cluster", "list", "--cluster=DefaultCluster")},
		{args: []string{"brokerStatus", "-b", "10.0.0.1:10911"}, want: l("broker", "status", "--broker=10.0.0.1:10911")},
		{args: []string{"brokerStatus"}, err: "brokerStatus needs one of -b/--brokerAddr or -c/--clusterName"},
		{args: []string{"getBrokerConfig", "--clusterName", "C"}, want: l("broker", "config", "--cluster=C")},
		{args: []string{"updateBrokerConfig", "-c", "C", "-a", "true", "-k", "maxMessageSize", "-v", "1024"},
			want: l("broker", "update-config", "--key=maxMessageSize", "--value=1024", "--cluster=C", "--slaves")},
		{args: []string{"updateBrokerConfig", "-b", "B", "-k", "k"}, err: "needs -v/--value"},
		{args: []string{"wipeWritePerm", "-b", "broker-a"}, want: l("broker", "wipe-write-perm", "--broker=broker-a")},
		{args: []string{"addWritePerm", "--brokerName", "broker-a"}, want: l("broker", "add-write-perm", "--broker=broker-a")},
		{args: []string{"updateSubGroup", "-c", "C", "-g", "G", "-s", "false", "-m", "true", "-d", "false", "-o", "true", "-q", "2", "-r", "3",
			"-p", `{"type":"EXPONENTIAL"}`, "-i", "0", "-w", "1", "-a", "false", "--attributes", "+x=y"},
			want: l("group", "update", "--group=G", "--cluster=C", "--consume-enable=false", "--consume-from-min=true", "--consume-broadcast=false",
				"--consume-orderly=true", "--notify-ids-changed=false", "--retry-queues=2", "--retry-max-times=3", "--broker-id=0",
				"--which-broker-when-slow=1", `--retry-policy={"type":"EXPONENTIAL"}`, "--attributes=+x=y")},
		{args: []string{"updateSubGroup", "-g", "G", "-o", "yes"}, err: `-o/--consumeMessageOrderly "yes": want true or false`},
		{args: []string{"updateSubGroup", "-g", "G", "-r", "many"}, err: `-r/--retryMaxTimes "many": want a whole number`},
		{args: []string{"deleteSubGroup", "-g", "G", "-c", "C"}, want: l("group", "delete", "--group=G", "--cluster=C", "--keep-offsets")},
		{args: []string{"deleteSubGroup", "-g", "G", "-r", "true", "-y"}, want: l("group", "delete", "--group=G", "--yes")},
		{args: []string{"deleteSubGroup", "-g", "G", "-b", "10.0.0.1:10911"}, err: "-b/--brokerAddr: runnelctl deletes a group from every master"},
		{args: []string{"getConsumerConfig", "-g", "G"}, want: l("group", "config", "--group=G")},
		{args: []string{"cloneGroupOffset", "-s", "a", "-d", "b", "-t", "T", "-o", "true"},
			want: l("group", "clone-offset", "--src=a", "--dest=b", "--topic=T", "--offline=true")},
		{args: []string{"consumerProgress"}, want: l("group", "progress")},
		{args: []string{"consumerProgress", "-g", "G", "-t", "T", "-s", "true", "-c", "C"},
			want: l("group", "progress", "--group=G", "--topic=T", "--clients=true")},
		{args: []string{"consumerConnection", "-g", "G", "-b", "x:1"}, want: l("group", "consumers", "--group=G")},
		{args: []string{"consumerStatus", "-g", "G", "-i", "10.0.0.7@1", "-s"},
			want: l("group", "consumers", "--group=G", "--running", "--client=10.0.0.7@1", "--stack")},
		{args: []string{"producerConnection", "-g", "P", "-t", "T"}, want: l("group", "producers", "--group=P")},
		{args: []string{"producerConnection", "-g", "P"}, err: "needs -t/--topic"},
		{args: []string{"resetOffsetByTime", "-g", "G", "-t", "T", "-s", "now", "-f", "true", "--cplus", "-c", "C"},
			want: l("group", "reset-offset", "--group=G", "--topic=T", "--to=now")},
		{args: []string{"resetOffsetByTime", "-g", "G", "-t", "T", "-s", "now", "-b", "x:1", "-q", "0", "-o", "5"}, err: "-b/--broker: resetting one queue"},
		{args: []string{"topicList"}, want: l("topic", "list", "--all")},
		{args: []string{"topicList", "-c"}, want: l("topic", "list", "--all", "--clusters")},
		{args: []string{"topicRoute", "-t", "T"}, want: l("topic", "route", "T")},
		{args: []string{"topicRoute", "-t", "T", "-l"}, want: l("topic", "route", "T")},
		{args: []string{"topicStatus", "-t", "T", "-c", "C"}, want: l("topic", "stats", "T")},
		{args: []string{"topicClusterList", "-t", "T"}, want: l("topic", "clusters", "T")},
		{args: []string{"updateTopic", "-t", "T", "-c", "C", "-r", "4", "-w", "4", "-p", "6", "-o", "true", "-a", "+message.type=FIFO"},
			want: l("topic", "create", "T", "--cluster=C", "--attributes=+message.type=FIFO", "--perm=6", "--read-queues=4", "--write-queues=4", "--order=true")},
		{args: []string{"updateTopic", "-t", "T", "-b", "B", "-u", "false"}, want: l("topic", "create", "T", "--broker=B")},
		{args: []string{"updateTopic", "-t", "T", "-b", "B", "-u", "true"}, err: "-u/--unit: unit topics are not supported"},
		{args: []string{"updateTopic", "-t", "T"}, err: "needs one of -b/--brokerAddr or -c/--clusterName"},
		{args: []string{"updateTopicPerm", "-t", "T", "-p", "4", "-b", "broker-a"}, want: l("topic", "update-perm", "T", "--perm=4", "--broker=broker-a")},
		{args: []string{"deleteTopic", "-t", "T", "-c", "C"}, want: l("topic", "delete", "T", "--cluster=C")},
		{args: []string{"statsAll", "-a", "-t", "T"}, want: l("stats", "all", "--topic=T", "--active")},
		{args: []string{"queryMsgById", "-i", "A,B", "-t", "T"}, want: lines{{"message", "get", "A", "--topic=T"}, {"message", "get", "B", "--topic=T"}}},
		{args: []string{"queryMsgById", "-i", "A", "-g", "G", "-d", "C"}, want: l("message", "consume-directly", "A", "--group=G", "--client=C")},
		{args: []string{"queryMsgById", "-i", "A", "-g", "G"}, err: "-g/--consumerGroup and -d/--clientId go together"},
		{args: []string{"queryMsgById", "-i", "A", "-s", "true"}, err: "-s/--sendMessage: resending is not supported"},
		{args: []string{"queryMsgByUniqueKey", "-i", "A", "-t", "T"}, want: l("message", "get", "A", "--topic=T")},
		{args: []string{"queryMsgByUniqueKey", "-i", "A", "-t", "T", "-a"}, want: l("message", "query", "--unique", "--topic=T", "--key=A", "--max=32")},
		{args: []string{"queryMsgByUniqueKey", "-i", "A", "-t", "T", "-g", "G", "-d", "C"},
			want: l("message", "consume-directly", "A", "--group=G", "--client=C", "--topic=T")},
		{args: []string{"queryMsgByKey", "-t", "T", "-k", "K", "-b", "1", "-e", "2", "-m", "5"},
			want: l("message", "query", "--topic=T", "--key=K", "--begin=1", "--end=2", "--max=5")},
		{args: []string{"queryMsgTraceById", "-i", "A", "-t", "TT", "-c", "5"}, want: l("message", "trace", "--id=A", "--topic=TT", "--max=5")},
		{args: []string{"queryMsgByOffset", "-t", "T", "-b", "B", "-i", "0", "-o", "3"},
			want: l("message", "print", "--topic=T", "--broker=B", "--count=1", "--queue=0", "--offset=3")},
		{args: []string{"queryMsgByOffset", "-t", "T", "-b", "B", "-i", "0"}, err: "needs -o/--offset"},
		{args: []string{"printMsg", "-t", "T", "-s", "TagA", "-b", "X", "-e", "Y", "-d", "false", "-c", "UTF-8"},
			want: l("message", "print", "--topic=T", "--all", "--tag=TagA", "--begin=X", "--end=Y", "--no-body")},
		{args: []string{"printMsg", "-t", "T", "-c", "GBK"}, err: "-c/--charsetName: bodies are printed as UTF-8"},
		{args: []string{"consumeMessage", "-t", "T", "-b", "B", "-i", "1", "-o", "2", "-c", "5", "-g", "G"},
			want: l("message", "print", "--topic=T", "--all", "--broker=B", "--queue=1", "--offset=2", "--max=5")},
		{args: []string{"consumeMessage", "-t", "T"}, want: l("message", "print", "--topic=T", "--all", "--max=128")},
		{args: []string{"sendMessage", "-t", "T", "-p", "-hello-", "-k", "K", "-c", "tag", "-b", "B", "-i", "1"},
			want: l("send", "--topic=T", "--keys=K", "--tag=tag", "--broker=B", "--queue=1", "--", "-hello-")},
		{args: []string{"sendMessage", "-t", "T", "-p", "x", "-m", "true"}, err: "-m/--msgTraceEnable: runnelctl sends no trace records"},
		// mqadmin's options only: no runnelctl flag, no argument.
		{args: []string{"topicStatus", "--topic", "T", "-x"}, err: "unknown shorthand flag: 'x' in -x (its options: -t -c"},
		{args: []string{"topicStatus", "orders"}, err: `topicStatus takes options only, got ["orders"]`},
		{args: []string{"topicStatus", "-t"}, err: "flag needs an argument"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, run, err := translate(t, tc.args...)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(run.lines, tc.want) {
				t.Fatalf("runs\n%q\nwant\n%q", run.lines, tc.want)
			}
			for _, line := range run.lines {
				checkParses(t, line)
			}
		})
	}
}

// checkParses fails t unless line is a runnelctl command whose flags and
// arguments it takes.
func checkParses(t *testing.T, line []string) {
	t.Helper()
	root := &cobra.Command{Use: "runnelctl"}
	root.AddCommand(nounCommands(&app{})...)
	c, rest, err := root.Find(line)
	if err != nil || c == root || c.RunE == nil {
		t.Fatalf("%q is no runnelctl command: %v", line, err)
	}
	if err := c.ParseFlags(rest); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	if c.Args != nil {
		if err := c.Args(c, c.Flags().Args()); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
	}
}

// TestMqadminEveryCommand checks every mqadmin command's own parts: its
// options' letters are its own (none taken twice, none of -h and -n), its
// example runs what its path says, and --help shows its options.
func TestMqadminEveryCommand(t *testing.T) {
	names := map[string]bool{}
	for _, spec := range mqadminCommands {
		if names[spec.name] {
			t.Errorf("%s twice", spec.name)
		}
		names[spec.name] = true
		letters := map[string]bool{"h": true, "n": true}
		for _, o := range spec.opts {
			if o.short != "" && letters[o.short] {
				t.Errorf("%s: -%s taken twice", spec.name, o.short)
			}
			letters[o.short] = true
		}
		_, run, err := translate(t, strings.Fields(spec.example)...)
		if err != nil {
			t.Errorf("%s's example %q: %v", spec.name, spec.example, err)
			continue
		}
		for _, line := range run.lines {
			checkParses(t, line)
		}
		if !reflect.DeepEqual(run.lines[0][:len(spec.path)], spec.path) && spec.name != "queryMsgByUniqueKey" {
			t.Errorf("%s's example runs %q, not runnelctl %s", spec.name, run.lines[0], strings.Join(spec.path, " "))
		}
		r := runCLI(t, nil, "", spec.name, "--help")
		if r.code != 0 || !strings.Contains(r.stdout, "runnelctl "+strings.Join(spec.path, " ")) {
			t.Errorf("%s --help: %+v", spec.name, r)
		}
		for _, o := range spec.opts {
			want := "--" + o.long
			if o.short != "" {
				want = "-" + o.short + ", --" + o.long
			}
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s --help does not show %s:\n%s", spec.name, want, r.stdout)
			}
		}
	}
	for _, name := range []string{"updateSubGroup", "deleteSubGroup", "getConsumerConfig", "cloneGroupOffset", "queryMsgByUniqueKey", "topicClusterList"} {
		if !names[name] {
			t.Errorf("mqadmin %s is missing", name)
		}
	}
}

// TestMqadminLettersWin: on an mqadmin-named command mqadmin's letters
// win over runnelctl's global ones (-o is consumeMessageOrderly, not the
// output format), the global long names still work, and -n is the name
// server.
func TestMqadminLettersWin(t *testing.T) {
	a, run, err := translate(t, "updateSubGroup", "-g", "G", "-o", "true", "-n", "10.0.0.9:9876", "--output", "json", "--timeout", "2s")
	if err != nil {
		t.Fatal(err)
	}
	if a.output != "json" || a.namesrv != "10.0.0.9:9876" || a.timeout != 2*time.Second {
		t.Errorf("globals: output %q namesrv %q timeout %v", a.output, a.namesrv, a.timeout)
	}
	if !reflect.DeepEqual(run.lines, [][]string{{"group", "update", "--group=G", "--consume-orderly=true"}}) {
		t.Errorf("runs %q", run.lines)
	}
	// topicRoute prints JSON unless -l, as mqadmin does, or --output says.
	for args, want := range map[string]string{"topicRoute -t T": "json", "topicRoute -t T -l": "table", "topicRoute -t T --output table": "table"} {
		if a, _, err := translate(t, strings.Fields(args)...); err != nil || a.output != want {
			t.Errorf("%s: output %q, %v; want %s", args, a.output, err, want)
		}
	}
	// A runnelctl command keeps -o as the output format.
	assertFailed(t, runCLI(t, nil, "", "group", "update", "-g", "G", "-o", "yaml"), `--output "yaml"`)
	// clusterList -i repeats.
	_, run, err = translate(t, "clusterList", "-i", "5")
	if err != nil || run.every != 5*time.Second {
		t.Errorf("clusterList -i 5: every %v, %v", run.every, err)
	}
	if _, _, err := translate(t, "clusterList", "-i", "0"); err == nil {
		t.Error("clusterList -i 0 accepted")
	}
}

// TestUnknownCommandIsNamed: an unknown command is reported as one, even
// with options runnelctl's root does not know after it (issue 38:
// "unknown shorthand flag: 't'").
func TestUnknownCommandIsNamed(t *testing.T) {
	for _, args := range [][]string{
		{"queryMsgTraceByKey", "-t", "orders", "-k", "x"},
		{"-n", "127.0.0.1:1", "cleanExpiredCQ", "-b", "x"},
		{"--timeout", "1s", "updateTopicList", "--file", "x"},
	} {
		assertFailed(t, runCLI(t, nil, "", args...), "unknown command")
	}
	r := runCLI(t, nil, "", "topicstatus", "-t", "x")
	assertFailed(t, r, `unknown command "topicstatus" for "runnelctl" (did you mean topicStatus?)`)
}
