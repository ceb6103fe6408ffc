package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/console"
	"github.com/runnelmq/runnel/integration/cluster"
	"github.com/runnelmq/runnel/remoting/protocol"
)

const (
	rootUser, rootSecret = "root", "root-secret-42"
	opsUser, opsPassword = "ops", "console-pw-17"
)

// aclCluster is a cluster with ACL 2.0 on (root its super user) and a
// console that signs with root's credentials behind a login of its own.
func aclCluster(t *testing.T) *env {
	return startWith(t, func(cfg *console.Config) {
		fast(cfg)
		cfg.Admin.Credentials = acl.Credentials{AccessKey: rootUser, SecretKey: rootSecret}
		cfg.Login = console.Login{User: opsUser, Password: opsPassword}
	}, cluster.Configure(func(_ int, cfg *config.Config) {
		cfg.Auth.AuthenticationEnabled, cfg.Auth.AuthorizationEnabled = true, true
		cfg.Auth.InitUsers = []protocol.UserInfo{{Username: rootUser, Password: rootSecret}}
		cfg.Auth.InnerCredentials = acl.Credentials{AccessKey: rootUser, SecretKey: rootSecret}
	}))
}

// TestLoginGuardsEveryPageAndNoSecretIsShown: with a login, pages send a
// visitor to /login and the API answers 401; a wrong password is refused;
// once logged in, the ACL page lists the users without their secrets.
func TestLoginGuardsEveryPageAndNoSecretIsShown(t *testing.T) {
	e := aclCluster(t)
	api := newAPI(t, e.con)
	for _, path := range []string{"/cluster", "/topics", "/acl", "/group?name=g"} {
		req, _ := http.NewRequest(http.MethodGet, api.base+path, nil)
		code, _, hdr := api.do(req)
		if code != http.StatusSeeOther || !strings.HasPrefix(hdr.Get("Location"), "/login?next=") {
			t.Fatalf("GET %s before login: %d %v", path, code, hdr)
		}
	}
	if code, body := api.get("/api/topics"); code != http.StatusUnauthorized || !strings.Contains(body, "Log in first") {
		t.Fatalf("API before login: %d %s", code, body)
	}
	if code, body, _ := api.post("/topics/create", url.Values{"name": {"T"}}, api.csrf); code != http.StatusSeeOther || strings.Contains(body, "created") {
		t.Fatalf("create before login: %d %s", code, body)
	}
	if code, body, _ := api.post("/login", url.Values{"user": {opsUser}, "password": {"wrong"}}, api.csrf); code != http.StatusUnauthorized || !strings.Contains(body, "Wrong user or password") {
		t.Fatalf("wrong password: %d %s", code, body)
	}
	// The login form needs its token too.
	if code, _, _ := api.post("/login", url.Values{"user": {opsUser}, "password": {opsPassword}}, ""); code != http.StatusForbidden {
		t.Fatalf("login without a token: %d", code)
	}
	var in struct {
		OK   bool   `json:"ok"`
		CSRF string `json:"csrfToken"`
	}
	if code := api.postJSON("/api/login", map[string]any{"user": opsUser, "password": opsPassword}, &in); code != http.StatusOK || !in.OK || in.CSRF == api.csrf {
		t.Fatalf("login: %d %+v (the session and its token are new after a login)", code, in)
	}
	api.csrf = in.CSRF
	// Signed with root's credentials, the console manages users.
	var res actionResult
	if code := api.postJSON("/api/acl/user/create", map[string]any{"username": "alice", "password": "alice-secret-99", "userType": "Normal"}, &res); code != http.StatusOK {
		t.Fatalf("create user: %d %+v", code, res.Error)
	}
	for _, path := range []string{"/acl", "/api/acl", "/cluster", "/api/cluster"} {
		code, body := api.get(path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		for _, secret := range []string{rootSecret, "alice-secret-99", opsPassword} {
			if strings.Contains(body, secret) {
				t.Fatalf("GET %s shows a secret", path)
			}
		}
		if strings.Contains(path, "acl") && (!strings.Contains(body, "alice") || !strings.Contains(body, rootUser)) {
			t.Fatalf("GET %s does not list the users: %s", path, body)
		}
	}
}

// TestBrowserLogsInWhenACLIsOn: the browser is sent to the login page,
// logs in, and sees the cluster and the ACL 2.0 users and rules; a rule
// added through the form shows up.
func TestBrowserLogsInWhenACLIsOn(t *testing.T) {
	e := aclCluster(t)
	b := newBrowser(t, e.con.URL())
	b.open("/acl")
	b.heading("Log in")
	b.fill("#user", opsUser)
	b.fill("#password", "wrong")
	b.click("#login")
	b.waitText(".error", "Wrong user or password")
	b.fill("#user", opsUser)
	b.fill("#password", opsPassword)
	b.screenshot("login")
	b.click("#login")
	b.heading("Access control")
	b.waitText("#users", rootUser)
	b.fill(`form[action="/acl/rule/create"] input[name=subject]`, "User:"+rootUser)
	b.fill(`form[action="/acl/rule/create"] input[name=resources]`, "Topic:orders")
	b.fill(`form[action="/acl/rule/create"] input[name=actions]`, "Pub,Sub")
	b.click(`form[action="/acl/rule/create"] button`)
	b.waitText(".notice", "Rule for User:root")
	b.waitText("#rules", "Topic:orders")
	b.waitFor("no secret on the page", "!document.body.innerHTML.includes("+js(rootSecret)+")")
	b.screenshot("acl")
	b.open("/cluster")
	b.waitText(".logout .user", opsUser)
	b.noErrorBox("the cluster page with ACL on")
	b.screenshot("cluster-signed")
}
