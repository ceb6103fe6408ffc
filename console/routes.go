package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// A view builds a page's model from a request; the same model is rendered
// as HTML at path and written as JSON at /api+path.
type viewFunc func(ctx context.Context, r *http.Request) (title string, model any, err error)

// An action changes the cluster. It answers a result (the API's JSON), a
// notice to show, and where a page goes next.
type actionFunc func(ctx context.Context, f url.Values) (result any, notice, next string, err error)

// routes is the console's whole URL space.
func (c *Console) routes() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets/static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/cluster", http.StatusFound) })
	mux.HandleFunc("GET /login", c.loginPage)
	mux.HandleFunc("POST /login", c.loginPost)
	mux.HandleFunc("POST /logout", c.logout)
	mux.HandleFunc("GET /api/session", c.apiSession)
	mux.HandleFunc("POST /api/login", c.loginPost)

	c.view(mux, "/cluster", "cluster", "cluster", c.clusterView)
	c.view(mux, "/topics", "topics", "topics", c.topicsView)
	c.view(mux, "/topic", "topic", "topics", c.topicView)
	c.view(mux, "/groups", "groups", "groups", c.groupsView)
	c.view(mux, "/group", "group", "groups", c.groupView)
	c.view(mux, "/messages", "messages", "messages", c.messagesView)
	c.view(mux, "/message", "message", "messages", c.messageView)
	c.view(mux, "/dlq", "dlq", "dlq", c.dlqView)
	c.view(mux, "/acl", "acl", "acl", c.aclView)
	c.view(mux, "/producers", "producers", "producers", c.producersView)
	c.view(mux, "/series", "", "", c.seriesView)

	c.action(mux, "/topics/create", c.createTopic)
	c.action(mux, "/topic/update", c.updateTopic)
	c.action(mux, "/topic/delete", c.deleteTopic)
	c.action(mux, "/topic/send", c.sendMessage)
	c.action(mux, "/group/reset", c.resetOffset)
	c.action(mux, "/group/delete", c.deleteGroup)
	c.action(mux, "/message/resend", c.resendMessage)
	c.action(mux, "/dlq/resend", c.resendDeadLetters)
	c.action(mux, "/acl/user/create", c.createUser)
	c.action(mux, "/acl/user/update", c.updateUser)
	c.action(mux, "/acl/user/delete", c.deleteUser)
	c.action(mux, "/acl/rule/create", c.createRule)
	c.action(mux, "/acl/rule/delete", c.deleteRule)
	return securityHeaders(mux)
}

// securityHeaders: nothing but the console's own files run or load, and no
// other site frames it.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "same-origin")
		hd.Set("X-Frame-Options", "DENY")
		h.ServeHTTP(w, r)
	})
}

// requestTimeout bounds what one page or action asks of the cluster.
const requestTimeout = 60 * time.Second

// authorize returns the request's session, or answers (a login page or a
// 401) and returns nil when a login is needed first.
func (c *Console) authorize(w http.ResponseWriter, r *http.Request, api bool) *session {
	se := c.sessions.get(w, r)
	if c.cfg.Login.User == "" || se.user != "" {
		return se
	}
	if api {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": &errView{Title: "Log in first",
			Detail: "POST /api/login with user and password (and the csrf token of GET /api/session)"}})
		return nil
	}
	http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
	return nil
}

func (c *Console) view(mux *http.ServeMux, path, tmpl, nav string, fn viewFunc) {
	if tmpl != "" {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			se := c.authorize(w, r, false)
			if se == nil {
				return
			}
			ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
			defer cancel()
			title, m, err := fn(ctx, r)
			p := c.pageData(r, se, title, nav, m)
			status := http.StatusOK
			if err != nil {
				p.Error = describe(err)
				status = p.Error.status
			}
			c.render(w, status, tmpl, p)
		})
	}
	mux.HandleFunc("GET /api"+path, func(w http.ResponseWriter, r *http.Request) {
		if c.authorize(w, r, true) == nil {
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		_, m, err := fn(ctx, r)
		if err != nil {
			ev := describe(err)
			writeJSON(w, ev.status, map[string]any{"error": ev})
			return
		}
		writeJSON(w, http.StatusOK, m)
	})
}

func (c *Console) action(mux *http.ServeMux, path string, fn actionFunc) {
	handle := func(api bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			se := c.authorize(w, r, api)
			if se == nil {
				return
			}
			form, err := readForm(r)
			if err == nil && !validCSRF(r, se) {
				err = &userError{status: http.StatusForbidden,
					msg: "Refused: the request carries no valid CSRF token. Reload the page and try again (a script: send the csrfToken of GET /api/session as the X-CSRF-Token header)."}
			}
			var result any
			var notice, next string
			if err == nil {
				ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
				result, notice, next, err = fn(ctx, form)
				cancel()
				if err == nil {
					// Lists come from the snapshot: read the new shape now,
					// so the next page shows what changed.
					rctx, rcancel := context.WithTimeout(context.Background(), requestTimeout)
					c.Refresh(rctx)
					rcancel()
				}
			}
			if api {
				if err != nil {
					ev := describe(err)
					writeJSON(w, ev.status, map[string]any{"error": ev})
					return
				}
				writeJSON(w, http.StatusOK, map[string]any{"ok": true, "notice": notice, "result": result})
				return
			}
			if err != nil {
				p := c.pageData(r, se, "Not done", "", nil)
				p.Error = describe(err)
				p.Back = backLink(r)
				c.render(w, p.Error.status, "error", still(p))
				return
			}
			if next == "" {
				next = backLink(r)
			}
			sep := "?"
			if strings.Contains(next, "?") {
				sep = "&"
			}
			http.Redirect(w, r, next+sep+"notice="+url.QueryEscape(notice), http.StatusSeeOther)
		}
	}
	mux.HandleFunc("POST "+path, handle(false))
	mux.HandleFunc("POST /api"+path, handle(true))
}

// backLink is the page a form came from, on this console only.
func backLink(r *http.Request) string {
	if ref, err := url.Parse(r.Referer()); err == nil && ref.Host == r.Host && strings.HasPrefix(ref.Path, "/") {
		q := ref.Query()
		q.Del("notice")
		ref.RawQuery = q.Encode()
		return ref.Path + "?" + ref.RawQuery
	}
	return "/cluster"
}

// maxFormBytes bounds a request body (a test message's body included).
const maxFormBytes = 4 << 20

// readForm reads an action's fields from a form, or from a JSON object
// whose values are strings, numbers or booleans (lists of strings are
// joined with commas).
func readForm(r *http.Request) (url.Values, error) {
	r.Body = http.MaxBytesReader(nil, r.Body, maxFormBytes)
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/json" {
		if err := r.ParseMultipartForm(maxFormBytes); err != nil && !errors.Is(err, http.ErrNotMultipart) {
			return nil, badRequest("the form could not be read: " + err.Error())
		}
		return r.PostForm, nil
	}
	var m map[string]any
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		return nil, badRequest("the JSON body is not an object: " + err.Error())
	}
	v := url.Values{}
	for k, x := range m {
		switch x := x.(type) {
		case string:
			v.Set(k, x)
		case float64, bool:
			v.Set(k, fmt.Sprint(x))
		case []any:
			var parts []string
			for _, e := range x {
				parts = append(parts, fmt.Sprint(e))
			}
			v.Set(k, strings.Join(parts, ","))
		case nil:
		default:
			return nil, badRequest(fmt.Sprintf("field %q: want a string, number, boolean or list", k))
		}
	}
	r.PostForm = v
	return v, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func (c *Console) apiSession(w http.ResponseWriter, r *http.Request) {
	se := c.sessions.get(w, r)
	writeJSON(w, http.StatusOK, map[string]any{"csrfToken": se.csrf, "user": se.user, "loginRequired": c.cfg.Login.User != ""})
}

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	se := c.sessions.get(w, r)
	p := c.pageData(r, se, "Log in", "", map[string]string{"Next": safeNext(r.URL.Query().Get("next"))})
	c.render(w, http.StatusOK, "login", still(p))
}

// safeNext keeps a post-login destination on this console.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.Contains(next, "\\") {
		return "/cluster"
	}
	return next
}

func (c *Console) loginPost(w http.ResponseWriter, r *http.Request) {
	api := strings.HasPrefix(r.URL.Path, "/api/")
	se := c.sessions.get(w, r)
	form, err := readForm(r)
	if err == nil && !validCSRF(r, se) {
		err = &userError{status: http.StatusForbidden, msg: "Refused: the login carries no valid CSRF token. Reload the page and try again."}
	}
	if err == nil {
		var ok bool
		var ns *session
		if ns, ok = c.sessions.login(w, se, form.Get("user"), form.Get("password")); ok {
			if api {
				writeJSON(w, http.StatusOK, map[string]any{"ok": true, "user": ns.user, "csrfToken": ns.csrf})
				return
			}
			http.Redirect(w, r, safeNext(form.Get("next")), http.StatusSeeOther)
			return
		}
		err = &userError{status: http.StatusUnauthorized, msg: "Wrong user or password."}
		if c.cfg.Login.User == "" {
			err = &userError{status: http.StatusBadRequest, msg: "This console has no login: every page is open."}
		}
	}
	ev := describe(err)
	if api {
		writeJSON(w, ev.status, map[string]any{"error": ev})
		return
	}
	se = c.sessions.get(w, r)
	p := c.pageData(r, se, "Log in", "", map[string]string{"Next": safeNext(form.Get("next"))})
	p.Error = ev
	c.render(w, ev.status, "login", still(p))
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	se := c.sessions.get(w, r)
	if !validCSRF(r, se) {
		p := c.pageData(r, se, "Not done", "", nil)
		p.Error = describe(&userError{status: http.StatusForbidden, msg: "Refused: no valid CSRF token. Reload the page and try again."})
		c.render(w, http.StatusForbidden, "error", still(p))
		return
	}
	c.sessions.end(se.id)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// still turns a page's live refresh off. The login and error pages have
// nothing live, and a refresh in flight while a login replaces the session
// would come back with the old session's cookie and undo the login.
func still(p pageData) pageData {
	p.RefreshMs = 0
	return p
}
