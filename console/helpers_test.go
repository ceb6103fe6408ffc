package console_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/console"
	"github.com/runnelmq/runnel/integration/cluster"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// netpoll starts its pollers once per process and never stops them.
		goleak.IgnoreAnyFunction("github.com/cloudwego/netpoll.(*defaultPoll).Wait"),
		// Pebble's and the HTTP client's idle goroutines end after the test.
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	)
}

// fast is a console config for tests: samples every 200 ms.
func fast(cfg *console.Config) { cfg.SampleInterval = 200 * time.Millisecond }

// env is an in-process cluster with a console and an admin client.
type env struct {
	c   *cluster.Cluster
	con *console.Console
	adm *admin.Admin
	ctx context.Context
}

func start(t *testing.T, opts ...cluster.Option) *env {
	return startWith(t, fast, opts...)
}

func startWith(t *testing.T, fn func(*console.Config), opts ...cluster.Option) *env {
	t.Helper()
	c := cluster.Start(t, opts...)
	con := c.StartConsole(fn)
	adm := c.Admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return &env{c: c, con: con, adm: adm, ctx: ctx}
}

// browserless is a client of the console's HTTP API: a cookie jar and the
// session's CSRF token.
type apiClient struct {
	t    *testing.T
	base string
	hc   *http.Client
	csrf string
}

func newAPI(t *testing.T, con *console.Console) *apiClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	a := &apiClient{t: t, base: strings.TrimSuffix(con.URL(), "/"), hc: &http.Client{Jar: jar, Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	t.Cleanup(a.hc.CloseIdleConnections)
	var s struct {
		CSRF string `json:"csrfToken"`
	}
	a.getJSON("/api/session", &s)
	a.csrf = s.CSRF
	if a.csrf == "" {
		t.Fatal("no csrf token from /api/session")
	}
	return a
}

func (a *apiClient) do(req *http.Request) (int, string, http.Header) {
	a.t.Helper()
	resp, err := a.hc.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

func (a *apiClient) get(path string) (int, string) {
	a.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, a.base+path, nil)
	code, body, _ := a.do(req)
	return code, body
}

func (a *apiClient) getJSON(path string, v any) int {
	a.t.Helper()
	code, body := a.get(path)
	if err := json.Unmarshal([]byte(body), v); err != nil {
		a.t.Fatalf("GET %s: %d %v: %s", path, code, err, body)
	}
	return code
}

// post sends a form with the session's token (token "" sends none).
func (a *apiClient) post(path string, form url.Values, token string) (int, string, http.Header) {
	a.t.Helper()
	if token != "" {
		form.Set("csrf", token)
	}
	req, _ := http.NewRequest(http.MethodPost, a.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return a.do(req)
}

// postJSON sends a JSON object to the API with the token in its header.
func (a *apiClient) postJSON(path string, body map[string]any, v any) int {
	a.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, a.base+path, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", a.csrf)
	code, resp, _ := a.do(req)
	if v != nil {
		if err := json.Unmarshal([]byte(resp), v); err != nil {
			a.t.Fatalf("POST %s: %d %v: %s", path, code, err, resp)
		}
	}
	return code
}
