package acl

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/internal/frametest"
	"github.com/runnelmq/runnel/internal/leakcheck"
	"github.com/runnelmq/runnel/internal/testwait"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// TestCheckerInterceptorOverTheWire serves on netpoll, whose pollers stay.
func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }

const testYAML = `
globalWhiteRemoteAddresses:
  - 10.10.103.*
  - 192.168.0.{1,2}
accounts:
  - accessKey: RocketMQ
    secretKey: 12345678
    whiteRemoteAddress: 192.168.9.*
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - topicA=DENY
      - topicB=PUB|SUB
      - topicC=SUB
    groupPerms:
      - groupA=DENY
      - groupB=PUB|SUB
  - accessKey: rocketmq2
    secretKey: 12345678
    admin: true
`

func mustTable(t *testing.T, y string) *Table {
	t.Helper()
	tb, err := ParsePlain([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// javaSignature signs as RocketMQ's Java client: every ext field but
// Signature, SecurityToken included, sorted by key, then the body.
func javaSignature(sk string, ext map[string]string, body []byte) string {
	keys := make([]string, 0, len(ext))
	for k := range ext {
		if k != FieldSignature {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(ext[k])
	}
	mac := hmac.New(sha1.New, []byte(sk))
	mac.Write([]byte(b.String()))
	mac.Write(body)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func signed(code int16, ak, sk string, ext map[string]string, body []byte) *protocol.Command {
	req := protocol.NewRequest(code, map[string]string{}, body)
	for k, v := range ext {
		req.ExtFields[k] = v
	}
	Credentials{AccessKey: ak, SecretKey: sk}.Sign(req)
	return req
}

func sendTo(topic, ak, sk string) *protocol.Command {
	return signed(protocol.ReqSendMessageV2, ak, sk, map[string]string{"a": "PG", "b": topic, "e": "0"}, []byte("hello"))
}

func pullFrom(topic, group, ak, sk string) *protocol.Command {
	return signed(protocol.ReqPullMessage, ak, sk, map[string]string{"topic": topic, "consumerGroup": group, "queueId": "0"}, nil)
}

// testCodes map the requests these tests send as the doors' tables do
// (theirs are tested with the doors: broker/remotingdoor, namesrv).
var testCodes = Codes{
	protocol.ReqSendMessageV2: func(dst []Need, _ *protocol.Command, f Fields) ([]Need, error) {
		return append(dst, TopicNeed(f.View("b"), Pub)), nil
	},
	protocol.ReqPullMessage: func(dst []Need, _ *protocol.Command, f Fields) ([]Need, error) {
		return append(dst, TopicNeed(f.View("topic"), Sub), GroupNeed(f.View("consumerGroup"), Sub)), nil
	},
	protocol.ReqUpdateAndCreateTopic: func(dst []Need, _ *protocol.Command, f Fields) ([]Need, error) {
		return append(dst, TopicNeed(f.View("topic"), Create)), nil
	},
	protocol.ReqGetRouteInfoByTopic: func(dst []Need, _ *protocol.Command, _ Fields) ([]Need, error) { return dst, nil },
}

// check decides req from remote with d alone, its needs from testCodes.
func check(d Decider, remote string, req *protocol.Command) error {
	return NewCheckpoint(Guard{d}, testCodes, "C").Check(remote, req)
}

func wantRefusal(t *testing.T, err error, msg string) {
	t.Helper()
	e, ok := err.(*Error)
	if !ok {
		t.Fatalf("got %v, want refusal %q", err, msg)
	}
	if e.Msg != msg {
		t.Fatalf("refusal %q, want %q", e.Msg, msg)
	}
}

func TestSignatureMatchesJavaAndGoClients(t *testing.T) {
	ext := map[string]string{"topic": "T", "queueId": "3", FieldAccessKey: "RocketMQ"}
	body := []byte("payload")
	if got, want := Signature("secret", ext, body, ""), javaSignature("secret", ext, body); got != want {
		t.Fatalf("Signature %s, want %s", got, want)
	}
	// With a SecurityToken: Java signs it, the Go client does not; both pass.
	withToken := map[string]string{"topic": "T", FieldAccessKey: "RocketMQ", FieldSecurityToken: "tok"}
	java := &protocol.Command{ExtFields: withToken, Body: body}
	java.ExtFields[FieldSignature] = javaSignature("12345678", withToken, body)
	if !signatureOK("12345678", java) {
		t.Fatal("Java-style signature with SecurityToken refused")
	}
	goExt := map[string]string{"topic": "T", FieldAccessKey: "RocketMQ"}
	goSig := javaSignature("12345678", goExt, body)
	goExt[FieldSecurityToken] = "tok"
	goExt[FieldSignature] = goSig
	if !signatureOK("12345678", &protocol.Command{ExtFields: goExt, Body: body}) {
		t.Fatal("Go-client-style signature (token unsigned) refused")
	}
	goExt[FieldSignature] = javaSignature("wrong-key", goExt, body)
	if signatureOK("12345678", &protocol.Command{ExtFields: goExt, Body: body}) {
		t.Fatal("signature with the wrong key accepted")
	}
}

// TestInterceptorSignsAtEncode checks the client interceptor: it leaves
// the caller's map alone (stale AccessKey and Signature in it included),
// and what the peer decodes carries Java's signature over every field it
// decodes, the SecurityToken too, and passes a check.
func TestInterceptorSignsAtEncode(t *testing.T) {
	tb := mustTable(t, testYAML)
	for _, token := range []string{"", "tok"} {
		for _, st := range []byte{protocol.SerializeRocketMQ, protocol.SerializeJSON} {
			creds := Credentials{AccessKey: "RocketMQ", SecretKey: "12345678", SecurityToken: token}
			hook := creds.Interceptor()[0]
			if hook.Request != nil || hook.Append == nil {
				t.Fatal("the interceptor should sign in an Append hook")
			}
			callerExt := map[string]string{"a": "PG", "b": "topicB", "e": "0", FieldAccessKey: "stale", FieldSignature: "stale",
				"i": "KEYS\x01k \"q\" \u00e9\\\x02"} // escaped in JSON
			for round := 0; round < 2; round++ { // the second with the key order remembered
				req := protocol.NewRequest(protocol.ReqSendMessageV2, callerExt, []byte("hello"))
				req.SerializeType = st
				if err := hook.Append("", req); err != nil {
					t.Fatal(err)
				}
				if len(callerExt) != 6 || callerExt[FieldAccessKey] != "stale" {
					t.Fatalf("the caller's map was changed: %v", callerExt)
				}
				got := frametest.Reframe(t, req)
				// Checked as the broker's interceptor checks it (UndecodedExt):
				// a send's ext fields stay undecoded for its typed header.
				if err := check(tb, "127.0.0.1:1", got); err != nil {
					t.Fatalf("undecoded request refused: %v", err)
				}
				if got.ExtFields != nil {
					t.Fatalf("Check decoded the ext fields into the map")
				}
				ext := got.Fields()
				if ext[FieldAccessKey] != "RocketMQ" || ext[FieldSecurityToken] != token && token != "" {
					t.Fatalf("decoded %v", ext)
				}
				if want := javaSignature("12345678", ext, got.Body); ext[FieldSignature] != want {
					t.Fatalf("token %q type %d: signature %s, want Java's %s", token, st, ext[FieldSignature], want)
				}
				if err := check(tb, "127.0.0.1:1", got); err != nil {
					t.Fatalf("decoded request refused: %v", err)
				}
				// Checked before encoding too (a server in the same process
				// would see MoreExt).
				if err := check(tb, "127.0.0.1:1", req); err != nil {
					t.Fatalf("request refused before encoding: %v", err)
				}
			}
		}
	}
}

func TestCheck(t *testing.T) {
	tb := mustTable(t, testYAML)
	const local = "127.0.0.1:50000"
	unsigned := protocol.NewRequest(protocol.ReqSendMessageV2, map[string]string{"b": "topicB"}, nil)
	tampered := sendTo("topicB", "RocketMQ", "12345678")
	tampered.Body = []byte("changed")
	for _, tc := range []struct {
		name   string
		remote string
		req    *protocol.Command
		want   string // "" passes
	}{
		{"global white list passes unsigned", "10.10.103.7:1", unsigned, ""},
		{"global braces list", "192.168.0.2:1", unsigned, ""},
		{"outside the white lists unsigned", local, unsigned, "No accessKey is configured"},
		{"unknown access key", local, sendTo("topicB", "nobody-here", "12345678"), "No acl config for nobody-here"},
		{"account white list passes a bad signature", "192.168.9.4:1", sendTo("topicA", "RocketMQ", "bad-secret"), ""},
		{"wrong secret", local, sendTo("topicB", "RocketMQ", "bad-secret"), "Check signature failed for accessKey=RocketMQ"},
		{"tampered body", local, tampered, "Check signature failed for accessKey=RocketMQ"},
		{"topic granted", local, sendTo("topicB", "RocketMQ", "12345678"), ""},
		{"topic denied", local, sendTo("topicA", "RocketMQ", "12345678"), "No permission for topic:topicA"},
		{"topic SUB only", local, sendTo("topicC", "RocketMQ", "12345678"), "No permission for topic:topicC"},
		{"default topic DENY", local, sendTo("other", "RocketMQ", "12345678"), "No default permission for topic:other"},
		{"trace topic always", local, sendTo("RMQ_SYS_TRACE_TOPIC", "RocketMQ", "12345678"), ""},
		{"pull granted, default group SUB", local, pullFrom("topicC", "anyGroup", "RocketMQ", "12345678"), ""},
		{"pull denied group", local, pullFrom("topicC", "groupA", "RocketMQ", "12345678"), "No permission for group:groupA"},
		{"admin code from normal", local, signed(protocol.ReqUpdateAndCreateTopic, "RocketMQ", "12345678", map[string]string{"topic": "x"}, nil),
			"Need admin permission for request code=17, but accessKey=RocketMQ is not"},
		{"admin code from admin", local, signed(protocol.ReqUpdateAndCreateTopic, "rocketmq2", "12345678", map[string]string{"topic": "x"}, nil), ""},
		{"admin may send anywhere", local, sendTo("topicA", "rocketmq2", "12345678"), ""},
		{"route query signed", local, signed(protocol.ReqGetRouteInfoByTopic, "RocketMQ", "12345678", map[string]string{"topic": "topicA"}, nil), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := check(tb, tc.remote, tc.req)
			switch tc.want {
			case "":
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
			case "*":
				if _, ok := err.(*Error); !ok {
					t.Fatalf("got %v, want a refusal", err)
				}
			default:
				wantRefusal(t, err, tc.want)
			}
		})
	}
}

func TestRefusalResponse(t *testing.T) {
	req := protocol.NewRequest(protocol.ReqSendMessageV2, nil, nil)
	resp := unauthenticated("No acl config for %s", "x").Response(req)
	if resp.Code != protocol.RespSystemError || resp.Remark != "org.apache.rocketmq.acl.common.AclException: No acl config for x" {
		t.Fatalf("response %d %q", resp.Code, resp.Remark)
	}
}

func TestParsePlainErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"short keys", "accounts:\n  - accessKey: abc\n    secretKey: 12345678\n", "longer than 6"},
		{"duplicate", "accounts:\n  - {accessKey: abcdefg, secretKey: 12345678}\n  - {accessKey: abcdefg, secretKey: 12345678}\n", "twice"},
		{"bad perm", "accounts:\n  - {accessKey: abcdefg, secretKey: 12345678, topicPerms: [t=WRITE]}\n", "t=WRITE"},
		{"no equals", "accounts:\n  - {accessKey: abcdefg, secretKey: 12345678, groupPerms: [g]}\n", "groupPerms entry"},
		{"bad default", "accounts:\n  - {accessKey: abcdefg, secretKey: 12345678, defaultTopicPerm: ALL}\n", "defaultTopicPerm"},
		{"bad address", "globalWhiteRemoteAddresses: [10.0.0.300-301]\n", "globalWhiteRemoteAddresses"},
		{"bad yaml", "accounts: [\n", "plain_acl.yml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePlain([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one containing %q", err, tc.want)
			}
		})
	}
	if tb, err := ParsePlain(nil); err != nil || tb.Accounts() != 0 {
		t.Fatalf("empty file: %v", err)
	}
}

func TestAddrPatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		ip      string
		want    bool
	}{
		{"*", "1.2.3.4", true},
		{"", "1.2.3.4", false},
		{"192.168.*", "192.168.7.8", true},
		{"192.168.*", "192.169.7.8", false},
		{"10.0.1-9.*", "10.0.5.1", true},
		{"10.0.1-9.*", "10.0.10.1", false},
		{"10.0.0.1,10.0.0.3", "10.0.0.3", true},
		{"10.0.0.1,10.0.0.3", "10.0.0.2", false},
		{"10.0.0.{1,3}", "10.0.0.3", true},
		{"10.0.0.{1,3}", "10.0.0.2", false},
		{"127.0.0.1", "127.0.0.1", true},
		{"::1", "::1", true},
		{"127.0.0.1", "127.0.0.2", false},
	} {
		p, err := parseAddrPattern(tc.pattern)
		if err != nil {
			t.Fatalf("%q: %v", tc.pattern, err)
		}
		got := p != nil && p.match(RemoteIP(tc.ip+":1"))
		if strings.Contains(tc.ip, ":") {
			got = p != nil && p.match(RemoteIP("["+tc.ip+"]:1"))
		}
		if got != tc.want {
			t.Errorf("%q matches %s: %v, want %v", tc.pattern, tc.ip, got, tc.want)
		}
	}
}

// TestCheckerReloads changes the file under a running Checker and waits,
// by polling the check, for the change to take effect; a broken file
// keeps the accounts in force.
func TestCheckerReloads(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain_acl.yml")
	write := func(y string) {
		t.Helper()
		tmp := file + ".tmp"
		if err := os.WriteFile(tmp, []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
	}
	write("accounts:\n  - {accessKey: producer1, secretKey: 12345678, defaultTopicPerm: PUB}\n")
	c, err := Open(Options{File: file, PollInterval: 10 * time.Millisecond, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := sendTo("T", "producer1", "12345678")
	if err := check(c, "127.0.0.1:1", req); err != nil {
		t.Fatal(err)
	}
	write("accounts:\n  - {accessKey: producer1, secretKey: 12345678, defaultTopicPerm: PUB, topicPerms: [T=DENY]}\n")
	testwait.For(t, 30*time.Second, "the DENY rule reloaded", func() bool { return check(c, "127.0.0.1:1", req) != nil })
	wantRefusal(t, check(c, "127.0.0.1:1", req), "No permission for topic:T")

	write("accounts: [\n") // broken: the last good accounts stay
	testwait.For(t, 30*time.Second, "the broken file read", func() bool {
		c.reloadMu.Lock()
		defer c.reloadMu.Unlock()
		return c.loaded.size == int64(len("accounts: [\n"))
	})
	wantRefusal(t, check(c, "127.0.0.1:1", req), "No permission for topic:T")

	if _, err := Open(Options{File: filepath.Join(t.TempDir(), "missing.yml")}); err == nil {
		t.Fatal("Open of a missing file succeeded")
	}
}

func FuzzParsePlain(f *testing.F) {
	f.Add([]byte(testYAML))
	f.Add([]byte("globalWhiteRemoteAddresses: ['10.*', '1.2.3.{4,5}']\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := ParsePlain(data)
		if err != nil {
			return
		}
		req := sendTo("T", "RocketMQ", "12345678")
		_ = check(tb, "127.0.0.1:1", req)
	})
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// BenchmarkSignCheck measures what ACL adds to one send: the client's
// signing of our client's send (its header a sorted field list) and the
// server's check of it as decoded from the wire (a permitted account, an
// explicit topic).
func BenchmarkSignCheck(b *testing.B) {
	tb, err := ParsePlain([]byte(testYAML))
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 1024)
	ic := Credentials{AccessKey: "RocketMQ", SecretKey: "12345678"}.Interceptor()[0]
	sign := ic.Append
	h := protocol.SendMessageRequestHeader{ProducerGroup: "PG", Topic: "topicB", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
		BornTimestamp: 1700000000000, Properties: "UNIQ_KEY\x01ABC\x02WAIT\x01true\x02", MaxReconsumeTimes: -1, BrokerName: "broker-a"}
	fields := h.AppendV2(nil)
	newReq := func() *protocol.Command {
		req := &protocol.Command{Code: protocol.ReqSendMessageV2, SerializeType: protocol.SerializeRocketMQ, Body: body}
		// The copy remoting makes of the caller's fields for the Append
		// hooks, with the room the interceptor declares.
		req.MoreExt = append(make([]protocol.Field, 0, len(fields)+ic.AppendFields), fields...)
		if err := sign("", req); err != nil {
			b.Fatal(err)
		}
		return req
	}
	b.SetBytes(int64(len(body)))
	b.Run("sign", func(b *testing.B) {
		for b.Loop() {
			newReq()
		}
	})
	b.Run("check", func(b *testing.B) {
		req := frametest.Reframe(b, newReq())
		cp := NewCheckpoint(Guard{tb}, testCodes, "C")
		for b.Loop() {
			if err := cp.Check("127.0.0.1:1", req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestSignatureKeySets signs key sets that share a count but not their
// keys, in turns, with and without a skipped key, on pooled signing
// states: what one left behind must never sign another.
func TestSignatureKeySets(t *testing.T) {
	sets := []map[string]string{
		{"a": "1", "b": "2", "c": "3"},
		{"a": "1", "b": "2", "d": "4"},
		{"x": "9", "b": "2", "a": "1"},
		{"a": "1", "b": "2", "c": "3", FieldSignature: "old"},
		{"a": "1", "b": "2", FieldSecurityToken: "tok"},
	}
	body := []byte("body")
	for round := 0; round < 3; round++ {
		for i, ext := range sets {
			if got, want := Signature("sk", ext, body, ""), javaSignature("sk", ext, body); got != want {
				t.Fatalf("round %d set %d: %s, want %s", round, i, got, want)
			}
			if _, ok := ext[FieldSecurityToken]; ok {
				goExt := map[string]string{}
				for k, v := range ext {
					if k != FieldSecurityToken {
						goExt[k] = v
					}
				}
				if got, want := Signature("sk", ext, body, FieldSecurityToken), javaSignature("sk", goExt, body); got != want {
					t.Fatalf("round %d set %d without the token: %s, want %s", round, i, got, want)
				}
			}
		}
	}
}

// TestCheckerInterceptorOverTheWire runs the Checker's interceptor in a
// remoting server and signs with Credentials' interceptor on the client,
// as a broker and our producer do: a signed send is let through with its
// header still undecoded for the handler's typed decode (UndecodedExt),
// and one signed with a wrong secret never reaches the handler.
func TestCheckerInterceptorOverTheWire(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain_acl.yml")
	if err := os.WriteFile(file, []byte(testYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Open(Options{File: file, PollInterval: -1, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cfg := remoting.DefaultServerConfig()
	cfg.Addr, cfg.Logger = "127.0.0.1:0", discard()
	cfg.Interceptors = []remoting.Interceptor{NewCheckpoint(Guard{c}, testCodes, "").Interceptor()}
	srv, err := remoting.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	undecoded := make(chan bool, 1)
	srv.Handle(protocol.ReqSendMessageV2, func(_ context.Context, _ *remoting.Conn, req *protocol.Command) *protocol.Command {
		undecoded <- req.ExtFields == nil
		return protocol.NewResponse(req, protocol.RespSuccess, "")
	})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	h := protocol.SendMessageRequestHeader{ProducerGroup: "PG", Topic: "topicB", MaxReconsumeTimes: -1}
	for _, sk := range []string{"12345678", "wrong"} {
		ccfg := remoting.DefaultClientConfig()
		ccfg.Logger = discard()
		ccfg.Interceptors = Credentials{AccessKey: "RocketMQ", SecretKey: sk}.Interceptor()
		cl := remoting.NewClient(ccfg)
		req := protocol.NewRequest(protocol.ReqSendMessageV2, nil, []byte("hello"))
		req.SerializeType = protocol.SerializeRocketMQ
		req.MoreExt = h.AppendV2(nil)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		resp, err := cl.Invoke(ctx, srv.Addr(), req)
		cancel()
		cl.Close()
		if err != nil {
			t.Fatal(err)
		}
		if sk == "wrong" {
			if resp.Code != protocol.RespSystemError || !strings.Contains(resp.Remark, "Check signature failed for accessKey=RocketMQ") {
				t.Fatalf("wrong secret answered %d %q", resp.Code, resp.Remark)
			}
			select {
			case <-undecoded:
				t.Fatal("a request signed with a wrong secret reached the handler")
			default:
			}
			continue
		}
		if resp.Code != protocol.RespSuccess {
			t.Fatalf("signed send answered %d %q", resp.Code, resp.Remark)
		}
		if !<-undecoded {
			t.Fatal("the handler got the send's ext fields decoded into the map: the ACL check decoded them")
		}
	}
}
