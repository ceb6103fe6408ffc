package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

// Sessions: a cookie names a session; the session holds its CSRF token and,
// once logged in, its user. Every mutating request must carry the token
// (form field csrf or header X-CSRF-Token) of the session its cookie names:
// a page of another site can make the browser send the cookie, but cannot
// read the token. The cookie is HttpOnly and SameSite=Strict besides.

const (
	sessionCookie = "runnel_console"
	csrfField     = "csrf"
	csrfHeader    = "X-CSRF-Token"
	// maxSessions bounds the table: a visitor that never logs in still
	// gets a session (for the login form's token).
	maxSessions = 10000
)

type session struct {
	id, csrf, user string
	expires        time.Time
}

type sessions struct {
	cfg Config
	mu  struct {
		sync.Mutex
		byID map[string]*session
	}
}

func newSessions(cfg Config) *sessions {
	s := &sessions{cfg: cfg}
	s.mu.byID = map[string]*session{}
	return s
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // never fails (crypto/rand's contract since Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}

// get returns the request's live session, or a new one (with its cookie set
// on w).
func (s *sessions) get(w http.ResponseWriter, r *http.Request) *session {
	now := s.cfg.Now()
	if ck, err := r.Cookie(sessionCookie); err == nil {
		s.mu.Lock()
		se := s.mu.byID[ck.Value]
		if se != nil && now.Before(se.expires) {
			cp := *se
			s.mu.Unlock()
			return &cp
		}
		delete(s.mu.byID, ck.Value)
		s.mu.Unlock()
	}
	if r.Header.Get(liveHeader) != "" {
		// A page's background refresh sets no cookie: it may have left
		// before a login replaced the session, and its answer must not
		// put the old one back.
		return &session{id: randomToken(), csrf: randomToken()}
	}
	return s.create(w, "")
}

// liveHeader marks the background refreshes of console.js.
const liveHeader = "X-Console-Live"

// create starts a session for user ("" none) and sets its cookie.
func (s *sessions) create(w http.ResponseWriter, user string) *session {
	now := s.cfg.Now()
	se := &session{id: randomToken(), csrf: randomToken(), user: user, expires: now.Add(s.cfg.SessionTTL)}
	s.mu.Lock()
	if len(s.mu.byID) >= maxSessions {
		s.sweepLocked(now)
	}
	s.mu.byID[se.id] = se
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: se.id, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Expires: se.expires})
	cp := *se
	return &cp
}

// sweepLocked drops expired sessions and, if the table is still full, the
// ones closest to expiring (anonymous ones first).
func (s *sessions) sweepLocked(now time.Time) {
	for id, se := range s.mu.byID {
		if !now.Before(se.expires) {
			delete(s.mu.byID, id)
		}
	}
	for len(s.mu.byID) >= maxSessions {
		var oldest *session
		for _, se := range s.mu.byID {
			if oldest == nil || (se.user == "") != (oldest.user == "") && se.user == "" || se.expires.Before(oldest.expires) {
				oldest = se
			}
		}
		delete(s.mu.byID, oldest.id)
	}
}

// end deletes a session (log out).
func (s *sessions) end(id string) {
	s.mu.Lock()
	delete(s.mu.byID, id)
	s.mu.Unlock()
}

// login checks user and password against the configured login; on success
// the old session ends and a new one, logged in, replaces it (a session id
// a visitor was given before logging in is worth nothing after).
func (s *sessions) login(w http.ResponseWriter, old *session, user, password string) (*session, bool) {
	l := s.cfg.Login
	okUser := subtle.ConstantTimeCompare([]byte(user), []byte(l.User)) == 1
	okPass := subtle.ConstantTimeCompare([]byte(password), []byte(l.Password)) == 1
	if l.User == "" || !okUser || !okPass {
		return nil, false
	}
	s.end(old.id)
	return s.create(w, user), true
}

// validCSRF reports whether r carries se's token.
func validCSRF(r *http.Request, se *session) bool {
	tok := r.Header.Get(csrfHeader)
	if tok == "" {
		tok = r.PostFormValue(csrfField)
	}
	return tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(se.csrf)) == 1
}
