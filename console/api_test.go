package console_test

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/console"
	"github.com/runnelmq/runnel/internal/testwait"
)

type apiError struct {
	Error *struct {
		Title    string `json:"title"`
		CodeName string `json:"codeName"`
		Meaning  string `json:"meaning"`
		Remark   string `json:"remark"`
		Node     string `json:"node"`
		Detail   string `json:"detail"`
	} `json:"error"`
}

type actionResult struct {
	apiError
	OK     bool   `json:"ok"`
	Notice string `json:"notice"`
}

// TestAPICreatesFindsAndDeletesATopic walks the JSON API a script would:
// create a FIFO topic, list it, send to it, find the message by key and by
// id, see it whole, and delete the topic only once confirmed.
func TestAPICreatesFindsAndDeletesATopic(t *testing.T) {
	e := start(t)
	api := newAPI(t, e.con)

	var created actionResult
	if code := api.postJSON("/api/topics/create", map[string]any{"name": "ApiOrders", "queues": 2, "type": "FIFO"}, &created); code != http.StatusOK || !created.OK {
		t.Fatalf("create: %d %+v", code, created)
	}
	var topics struct {
		Rows []struct {
			Name   string `json:"topic"`
			Type   string `json:"type"`
			Queues int    `json:"writeQueues"`
			System bool   `json:"system"`
		} `json:"rows"`
		Total int `json:"total"`
		All   int `json:"all"`
	}
	api.getJSON("/api/topics?q=apiord", &topics)
	if topics.Total != 1 || topics.Rows[0].Name != "ApiOrders" || topics.Rows[0].Type != "FIFO" || topics.Rows[0].Queues != 2 {
		t.Fatalf("topics matching apiord: %+v", topics)
	}
	// System topics stay out of the list unless asked for.
	api.getJSON("/api/topics", &topics)
	for _, r := range topics.Rows {
		if r.System || r.Name == "TBW102" {
			t.Fatalf("a system topic in the default list: %+v", r)
		}
	}
	api.getJSON("/api/topics?system=1&q=TBW102", &topics)
	if topics.Total != 1 {
		t.Fatalf("TBW102 with the system switch: %+v", topics)
	}
	// A second create of the same name is refused in words.
	var again actionResult
	if code := api.postJSON("/api/topics/create", map[string]any{"name": "ApiOrders"}, &again); code != http.StatusBadRequest || !strings.Contains(again.Error.Title, "exists already") {
		t.Fatalf("create again: %d %+v", code, again.Error)
	}

	var sent struct {
		actionResult
		Result admin.SendResult `json:"result"`
	}
	if code := api.postJSON("/api/topic/send", map[string]any{"name": "ApiOrders", "tags": "TagA", "keys": "order-7", "body": `{"n":7}`}, &sent); code != http.StatusOK {
		t.Fatalf("send: %d %+v", code, sent)
	}
	var found struct {
		Rows []struct {
			MsgID       string `json:"msgId"`
			OffsetMsgID string `json:"offsetMsgId"`
			Preview     string `json:"preview"`
		} `json:"messages"`
	}
	api.getJSON("/api/messages?mode=key&topic=ApiOrders&key=order-7", &found)
	if len(found.Rows) != 1 || found.Rows[0].MsgID != sent.Result.MsgID || found.Rows[0].Preview != `{"n":7}` {
		t.Fatalf("by key: %+v (sent %+v)", found, sent.Result)
	}
	api.getJSON("/api/messages?mode=id&topic=ApiOrders&id="+sent.Result.MsgID, &found)
	if len(found.Rows) != 1 || found.Rows[0].OffsetMsgID != sent.Result.OffsetMsgID {
		t.Fatalf("by id: %+v", found)
	}
	var msg struct {
		Body       string `json:"body"`
		Tags       string `json:"tags"`
		Properties []struct{ Name, Value string }
	}
	api.getJSON("/api/message?id="+sent.Result.OffsetMsgID, &msg)
	if msg.Body != `{"n":7}` || msg.Tags != "TagA" {
		t.Fatalf("message: %+v", msg)
	}
	var browsed struct {
		Rows []struct{ QueueOffset int64 } `json:"messages"`
	}
	api.getJSON("/api/messages?mode=browse&topic=ApiOrders", &browsed)
	if len(browsed.Rows) != 1 {
		t.Fatalf("browse: %+v", browsed)
	}

	// Delete: refused without the name typed, done with it.
	var del actionResult
	if code := api.postJSON("/api/topic/delete", map[string]any{"name": "ApiOrders", "confirm": "apiorders"}, &del); code != http.StatusBadRequest {
		t.Fatalf("delete unconfirmed: %d %+v", code, del)
	}
	if _, err := e.adm.TopicRoute(e.ctx, "ApiOrders"); err != nil {
		t.Fatalf("the topic went without confirmation: %v", err)
	}
	if code := api.postJSON("/api/topic/delete", map[string]any{"name": "ApiOrders", "confirm": "ApiOrders"}, &del); code != http.StatusOK || !del.OK {
		t.Fatalf("delete: %d %+v", code, del)
	}
	if _, err := e.adm.TopicRoute(e.ctx, "ApiOrders"); !errors.Is(err, admin.ErrNotFound) {
		t.Fatalf("route after delete: %v", err)
	}
	api.getJSON("/api/topics?q=ApiOrders", &topics)
	if topics.Total != 0 {
		t.Fatalf("the list still has the deleted topic: %+v", topics)
	}
}

// TestMutationsWithoutTheCSRFTokenAreRefused: a form posted without the
// session's token, with another session's, or with a made-up one changes
// nothing and says why.
func TestMutationsWithoutTheCSRFTokenAreRefused(t *testing.T) {
	e := start(t)
	api := newAPI(t, e.con)
	other := newAPI(t, e.con)
	madeUp := "x" + api.csrf[1:]
	if madeUp == api.csrf {
		madeUp = "y" + api.csrf[1:]
	}
	for name, token := range map[string]string{"none": "", "another session's": other.csrf, "made up": madeUp} {
		code, body, _ := api.post("/topics/create", url.Values{"name": {"CsrfTopic"}}, token)
		if code != http.StatusForbidden || !strings.Contains(body, "CSRF token") {
			t.Fatalf("token %s: %d\n%s", name, code, body)
		}
		code, body, _ = api.post("/api/topics/create", url.Values{"name": {"CsrfTopic"}}, token)
		if code != http.StatusForbidden || !strings.Contains(body, "CSRF") {
			t.Fatalf("API, token %s: %d\n%s", name, code, body)
		}
	}
	if _, err := e.adm.TopicRoute(e.ctx, "CsrfTopic"); !errors.Is(err, admin.ErrNotFound) {
		t.Fatalf("a refused create made the topic: %v", err)
	}
	// The form with its token works, and redirects to the new topic.
	code, _, hdr := api.post("/topics/create", url.Values{"name": {"CsrfTopic"}}, api.csrf)
	if code != http.StatusSeeOther || !strings.HasPrefix(hdr.Get("Location"), "/topic?name=CsrfTopic") {
		t.Fatalf("create with the token: %d %v", code, hdr)
	}
}

// TestMarkupIsShownAsText: a body, tags and keys holding <script> are
// shown escaped on every page that shows them, never as markup.
func TestMarkupIsShownAsText(t *testing.T) {
	e := start(t)
	api := newAPI(t, e.con)
	if _, err := e.adm.CreateTopic(e.ctx, admin.TopicSpec{Topic: "Xss", ReadQueueNums: 1, WriteQueueNums: 1}); err != nil {
		t.Fatal(err)
	}
	const body = `<script>alert("body")</script><img src=x onerror=alert(1)>`
	res, err := e.adm.SendMessage(e.ctx, admin.Send{Topic: "Xss", Tags: "<b>tag</b>", Keys: []string{"<i>key</i>"}, Body: []byte(body),
		Properties: map[string]string{"note": "<script>alert('prop')</script>"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"/message?id=" + res.OffsetMsgID, "/message?as=json&id=" + res.OffsetMsgID, "/message?as=hex&id=" + res.OffsetMsgID,
		"/messages?mode=browse&topic=Xss", "/messages?mode=key&topic=Xss&key=" + url.QueryEscape("<i>key</i>"),
	} {
		code, page := api.get(path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", path, code, page)
		}
		for _, raw := range []string{"<script>alert", "<img src=x", "<b>tag</b>", "<i>key</i>"} {
			if strings.Contains(page, raw) {
				t.Fatalf("GET %s shows %q as markup", path, raw)
			}
		}
		if !strings.Contains(path, "as=hex") && !strings.Contains(page, "&lt;script&gt;alert(") {
			t.Fatalf("GET %s does not show the body as text", path)
		}
	}
	// The page's only scripts are the console's own file.
	_, page := api.get("/message?id=" + res.OffsetMsgID)
	if n := strings.Count(page, "<script"); n != 1 || !strings.Contains(page, `<script src="/static/console.js" defer></script>`) {
		t.Fatalf("%d script tags on the message page", n)
	}
}

// TestClusterErrorsAreShownInWords: a refusal shows its code's name, its
// meaning and the remark; an unreachable name server says it cannot be
// reached. Neither is a blank page.
func TestClusterErrorsAreShownInWords(t *testing.T) {
	e := start(t)
	api := newAPI(t, e.con)
	code, page := api.get("/topic?name=NoSuchTopic")
	if code != http.StatusNotFound || !strings.Contains(page, "TOPIC_NOT_EXIST") || !strings.Contains(page, "does not exist") ||
		!strings.Contains(page, "Remark") || !strings.Contains(page, "name server") {
		t.Fatalf("missing topic: %d\n%s", code, page)
	}
	var ae apiError
	if code := api.getJSON("/api/topic?name=NoSuchTopic", &ae); code != http.StatusNotFound || ae.Error == nil ||
		ae.Error.CodeName != "TOPIC_NOT_EXIST" || ae.Error.Meaning == "" || ae.Error.Node == "" {
		t.Fatalf("API, missing topic: %d %+v", code, ae.Error)
	}
	// A console whose name server is gone.
	cfg := console.DefaultConfig()
	cfg.Listen = "127.0.0.1:0"
	cfg.Admin.NamesrvAddrs = []string{"127.0.0.1:1"}
	cfg.Admin.DialTimeout = 500e6
	down, err := console.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := down.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = down.Close() })
	code, page = newAPI(t, down).get("/cluster")
	if code != http.StatusOK || !strings.Contains(page, "No answer from name server 127.0.0.1:1") || !strings.Contains(page, "could not be reached") {
		t.Fatalf("cluster page with the name server down: %d\n%s", code, page)
	}
}

func TestConfigRefusesCredentialsWithoutALogin(t *testing.T) {
	cfg := console.DefaultConfig()
	cfg.Admin.Credentials.AccessKey, cfg.Admin.Credentials.SecretKey = "root", "secret"
	if _, err := console.New(cfg); !errors.Is(err, console.ErrBadConfig) || !strings.Contains(err.Error(), "Login") {
		t.Fatalf("credentials without a login: %v", err)
	}
	cfg.Login = console.Login{User: "ops"}
	if _, err := console.New(cfg); !errors.Is(err, console.ErrBadConfig) {
		t.Fatalf("a login without a password: %v", err)
	}
	cfg = console.DefaultConfig()
	cfg.Listen = "nowhere"
	if _, err := console.New(cfg); !errors.Is(err, console.ErrBadConfig) || !strings.Contains(err.Error(), "Listen") {
		t.Fatalf("bad listen: %v", err)
	}
}

// TestClusterShowsDiskAgainstTheRatios: a broker's disk use is shown as
// the fraction it reports (commitLogDiskRatio) against the ratio past
// which it refuses sends (diskSpaceWarningLevelRatio), and a broker with
// room takes sends.
func TestClusterShowsDiskAgainstTheRatios(t *testing.T) {
	e := start(t)
	api := newAPI(t, e.con)
	var m struct {
		Brokers []struct {
			Name          string  `json:"brokerName"`
			DiskRatio     float64 `json:"diskRatio"`
			DiskLimit     float64 `json:"diskLimit"`
			WritesRefused bool    `json:"writesRefused"`
		} `json:"brokers"`
	}
	testwait.For(t, 20*time.Second, "the cluster page lists the broker", func() bool {
		return api.getJSON("/api/cluster", &m) == http.StatusOK && len(m.Brokers) > 0
	})
	for _, b := range m.Brokers {
		if b.DiskRatio < 0 || b.DiskRatio > 1 || b.DiskLimit != 0.9 || b.WritesRefused {
			t.Errorf("broker %s: disk %v of limit %v, writes refused %v; want a fraction, 0.9, false", b.Name, b.DiskRatio, b.DiskLimit, b.WritesRefused)
		}
	}
}
