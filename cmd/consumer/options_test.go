package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client/offset"
)

func validFlags() flags {
	return flags{namesrv: "127.0.0.1:9876", topic: "orders", tag: "*", from: "last", format: "text", logLevel: "warn"}
}

func TestValidateDefaults(t *testing.T) {
	f := validFlags()
	p, err := f.validate(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if p.group != "" {
		t.Errorf("group %q, want none: without --group the topic is read without one", p.group)
	}
	if p.expr != "*" || p.from != offset.ConsumeFromLastOffset || p.orderly || p.broadcast || p.json || p.max != 0 || p.idle != 0 {
		t.Errorf("plan %+v", p)
	}
	if len(p.namesrvs) != 1 || p.namesrvs[0] != "127.0.0.1:9876" {
		t.Errorf("namesrvs %q", p.namesrvs)
	}
}

func TestValidateOptions(t *testing.T) {
	f := validFlags()
	f.namesrv = "http://10.0.0.1:9876; 10.0.0.2:9876"
	f.group = "billing"
	f.tag = " TagA||TagB ||  TagC "
	f.max = 5
	f.format = "json"
	f.broadcast = true
	f.idleTimeout = 3 * time.Second
	p, err := f.validate(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if p.group != "billing" {
		t.Errorf("group %q", p.group)
	}
	if p.expr != "TagA || TagB || TagC" {
		t.Errorf("expr %q", p.expr)
	}
	if !p.orderly {
		t.Error("--max did not select the orderly path")
	}
	if !p.json || !p.broadcast || p.max != 5 || p.idle != 3*time.Second {
		t.Errorf("plan %+v", p)
	}
	if len(p.namesrvs) != 2 || p.namesrvs[0] != "10.0.0.1:9876" || p.namesrvs[1] != "10.0.0.2:9876" {
		t.Errorf("namesrvs %q", p.namesrvs)
	}
}

func TestValidateRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*flags)
		want string
	}{
		{"no topic", func(f *flags) { f.topic = " " }, "--topic is required"},
		{"bad topic", func(f *flags) { f.topic = "a b" }, `--topic "a b"`},
		{"long topic", func(f *flags) { f.topic = strings.Repeat("t", 128) }, "--topic"},
		{"bad group", func(f *flags) { f.group = "g/1" }, `--group "g/1"`},
		{"empty namesrv", func(f *flags) { f.namesrv = " ; " }, "--namesrv is empty"},
		{"namesrv no port", func(f *flags) { f.namesrv = "localhost" }, `--namesrv "localhost"`},
		{"format", func(f *flags) { f.format = "yaml" }, `--output "yaml": want text or json`},
		{"negative max", func(f *flags) { f.max = -1 }, "--max -1"},
		{"negative idle", func(f *flags) { f.idleTimeout = -time.Second }, "--idle-timeout -1s"},
		{"empty tag part", func(f *flags) { f.tag = "TagA ||" }, "--tag"},
		{"star in list", func(f *flags) { f.tag = "TagA || *" }, "--tag"},
		{"from", func(f *flags) { f.from = "yesterday" }, `--from "yesterday"`},
		{"empty from", func(f *flags) { f.from = "" }, "--from is empty"},
		{"zero duration", func(f *flags) { f.from = "0s" }, "must be positive"},
		{"bad rocketmq time", func(f *flags) { f.from = "20261399000000" }, "yyyyMMddHHmmss"},
		{"log level", func(f *flags) { f.logLevel = "loud" }, "--log-level"},
		{"tag and sql", func(f *flags) { f.tagSet, f.sql, f.sqlSet = true, "a > 1", true }, "--tag and --sql cannot be used together"},
		{"tag and empty sql", func(f *flags) { f.tagSet, f.sqlSet = true, true }, "--tag and --sql cannot be used together"},
		{"empty sql", func(f *flags) { f.sql, f.sqlSet = "  ", true }, "--sql is empty"},
		{"sql LIKE", func(f *flags) { f.sql, f.sqlSet = "a LIKE 'x%'", true }, `--sql "a LIKE 'x%'": sql92: column 3: LIKE is not supported`},
		{"sql syntax", func(f *flags) { f.sql, f.sqlSet = "a > 1 AND", true }, "column 10: unexpected end of expression"},
	} {
		f := validFlags()
		tc.edit(&f)
		_, err := f.validate(time.Now())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

func TestValidateSQL(t *testing.T) {
	f := validFlags()
	f.sql, f.sqlSet = "  region = 'eu' AND amount > 100 ", true
	p, err := f.validate(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !p.sql || p.expr != "region = 'eu' AND amount > 100" {
		t.Errorf("plan sql %v expr %q", p.sql, p.expr)
	}
	// --tag at its default, not given, is no conflict; a tag plan is no SQL.
	f = validFlags()
	if p, err = f.validate(time.Now()); err != nil || p.sql || p.expr != "*" {
		t.Errorf("tag plan %+v %v", p, err)
	}
}

func TestHelpDocumentsSQL(t *testing.T) {
	code, out, _ := runInProcess(context.Background(), noEnv, "--help")
	for _, want := range []string{"--sql string", "--sql \"region = 'eu' AND amount > 100", "do not combine"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("help (exit %d) lacks %q:\n%s", code, want, out)
		}
	}
}

func TestRunSQLErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--topic", "t", "--tag", "A", "--sql", "a > 1"}, "--tag and --sql cannot be used together"},
		{[]string{"--topic", "t", "--sql", ""}, "--sql is empty"},
		{[]string{"--topic", "t", "--sql", "a = 1 + 2"}, "arithmetic ('+') is not supported"},
	} {
		code, out, errOut := runInProcess(context.Background(), noEnv, tc.args...)
		if code != 1 || out != "" || !strings.HasPrefix(errOut, "consumer: ") || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d stdout %q stderr %q, want 1 and one line with %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

func TestParseFrom(t *testing.T) {
	now := time.Date(2026, 11, 29, 8, 30, 0, 0, time.UTC)
	local := func(y int, mo time.Month, d, h, mi, s int) time.Time {
		return time.Date(y, mo, d, h, mi, s, 0, time.Local)
	}
	for _, tc := range []struct {
		in   string
		from offset.ConsumeFrom
		at   time.Time
	}{
		{"last", offset.ConsumeFromLastOffset, time.Time{}},
		{"LATEST", offset.ConsumeFromLastOffset, time.Time{}},
		{"first", offset.ConsumeFromFirstOffset, time.Time{}},
		{"earliest", offset.ConsumeFromFirstOffset, time.Time{}},
		{"15m", offset.ConsumeFromTimestamp, now.Add(-15 * time.Minute)},
		{"-2h", offset.ConsumeFromTimestamp, now.Add(-2 * time.Hour)},
		{"1764405000000", offset.ConsumeFromTimestamp, time.UnixMilli(1764405000000)},
		{"20261129083000", offset.ConsumeFromTimestamp, local(2026, 11, 29, 8, 30, 0)},
		{"2026-11-29T08:00:00Z", offset.ConsumeFromTimestamp, time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)},
		{"2026-11-29 08:00:00", offset.ConsumeFromTimestamp, local(2026, 11, 29, 8, 0, 0)},
		{"2026-11-29", offset.ConsumeFromTimestamp, local(2026, 11, 29, 0, 0, 0)},
	} {
		from, at, err := parseFrom(tc.in, now)
		if err != nil || from != tc.from || !at.Equal(tc.at) {
			t.Errorf("parseFrom(%q) = %v %v %v, want %v %v", tc.in, from, at, err, tc.from, tc.at)
		}
	}
}

// runInProcess runs the command in this process, as main does.
func runInProcess(ctx context.Context, getenv func(string) string, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(ctx, args, env{getenv: getenv, stdout: &out, stderr: &errOut})
	return code, out.String(), errOut.String()
}

func noEnv(string) string { return "" }

func TestRunFlagErrorsAreOneLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "consumer: --topic is required\n"},
		{[]string{"--topic", "t", "extra"}, "consumer: unexpected argument \"extra\" (the topic goes in --topic)\n"},
		{[]string{"--topic", "t", "--max", "x"}, "consumer: --max \"x\": want a whole number\n"},
		{[]string{"--topic", "t", "--bogus"}, "consumer: unknown flag: --bogus\n"},
		{[]string{"--topic", "t", "--idle-timeout", "5"}, "consumer: --idle-timeout \"5\": want a duration such as 500ms, 5s or 1m\n"},
	} {
		code, out, errOut := runInProcess(context.Background(), noEnv, tc.args...)
		if code != 1 || out != "" || errOut != tc.want {
			t.Errorf("%q: exit %d stdout %q stderr %q, want 1, \"\", %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

func TestRunNamesrvFromEnvironment(t *testing.T) {
	// Nothing listens on port 1: the error names the address in use.
	env := func(k string) string {
		if k == "NAMESRV_ADDR" {
			return "127.0.0.1:1"
		}
		return ""
	}
	code, out, errOut := runInProcess(context.Background(), env, "--topic", "t")
	if code != 1 || out != "" || !strings.Contains(errOut, "127.0.0.1:1") {
		t.Fatalf("exit %d stdout %q stderr:\n%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "consumer: topic t: ") {
		t.Errorf("last line %q", last)
	}
	// --namesrv wins over the environment.
	code, _, errOut = runInProcess(context.Background(), env, "--topic", "t", "--namesrv", "127.0.0.1:2")
	if code != 1 || !strings.Contains(errOut, "127.0.0.1:2") || strings.Contains(errOut, "127.0.0.1:1") {
		t.Errorf("exit %d stderr:\n%s", code, errOut)
	}
}

func TestRunHelpHasExamples(t *testing.T) {
	code, out, errOut := runInProcess(context.Background(), noEnv, "--help")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d stderr %q", code, errOut)
	}
	for _, want := range []string{"Examples:", "--from first --max 10", "-o json", "--namesrv", "--idle-timeout", "NAMESRV_ADDR", "bodyBase64"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
}
