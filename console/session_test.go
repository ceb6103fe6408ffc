package console

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestSessionsExpireLoginReplacesAndRefreshesSetNoCookie: a session lasts
// SessionTTL by the injected clock; a login replaces the session (the old
// id is worth nothing); a background refresh carrying a dead session's
// cookie gets no cookie back.
func TestSessionsExpireLoginReplacesAndRefreshesSetNoCookie(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cfg := DefaultConfig()
	cfg.Login = Login{User: "ops", Password: "pw"}
	cfg.SessionTTL = time.Hour
	cfg.Now = func() time.Time { return now }
	s := newSessions(cfg)
	req := func(cookie string, live bool) (*session, *httptest.ResponseRecorder) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if cookie != "" {
			r.AddCookie(&http.Cookie{Name: sessionCookie, Value: cookie})
		}
		if live {
			r.Header.Set(liveHeader, "1")
		}
		w := httptest.NewRecorder()
		return s.get(w, r), w
	}
	first, w := req("", false)
	if len(w.Result().Cookies()) != 1 || first.user != "" {
		t.Fatalf("a new visitor: %+v %v", first, w.Result().Cookies())
	}
	if again, _ := req(first.id, false); again.id != first.id || again.csrf != first.csrf {
		t.Fatal("the same cookie gave another session")
	}
	if _, ok := s.login(httptest.NewRecorder(), first, "ops", "nope"); ok {
		t.Fatal("a wrong password logged in")
	}
	in, ok := s.login(httptest.NewRecorder(), first, "ops", "pw")
	if !ok || in.user != "ops" || in.id == first.id || in.csrf == first.csrf {
		t.Fatalf("login: %+v %v", in, ok)
	}
	if old, w := req(first.id, true); old.user != "" || len(w.Result().Cookies()) != 0 {
		t.Fatalf("a refresh with the pre-login cookie: %+v, cookies %v", old, w.Result().Cookies())
	}
	now = now.Add(59 * time.Minute)
	if still, _ := req(in.id, false); still.user != "ops" {
		t.Fatal("the login ended early")
	}
	now = now.Add(2 * time.Minute)
	if gone, _ := req(in.id, false); gone.user != "" || gone.id == in.id {
		t.Fatal("the login outlived SessionTTL")
	}
}
