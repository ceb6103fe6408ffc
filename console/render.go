package console

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/runnelmq/runnel/console/chart"
	"github.com/runnelmq/runnel/remoting/protocol"
)

//go:embed assets
var assets embed.FS

// pageData is what every page template gets.
type pageData struct {
	Title  string
	Nav    string
	User   string
	CSRF   string
	Login  bool // the console has a login
	Notice string
	Error  *errView
	Back   string
	// RefreshMs is how often the page's live parts reload; 0 never.
	RefreshMs int
	Cluster   string // the name servers, for the header
	// API is this page's JSON under /api, "" for none.
	API string
	Now time.Time
	M   any
}

func (c *Console) pageData(r *http.Request, se *session, title, nav string, m any) pageData {
	notice := r.URL.Query().Get("notice")
	if r.URL.Query().Get("quiet") == "1" {
		notice = "" // the page shows the result itself
	}
	return pageData{Title: title, Nav: nav, User: se.user, CSRF: se.csrf, Login: c.cfg.Login.User != "",
		Notice: notice, API: "/api" + r.URL.Path + queryWithout(r.URL.Query(), "notice", "quiet"), RefreshMs: int(c.cfg.SampleInterval / time.Millisecond),
		Cluster: strings.Join(c.cfg.Admin.NamesrvAddrs, ";"), Now: c.cfg.Now(), M: m}
}

// pages are the parsed templates, one set per page: the layout and the
// page's own "content".
type pages struct {
	byName map[string]*template.Template
}

var funcs = template.FuncMap{
	"num": func(v any) string {
		switch x := v.(type) {
		case int:
			return chart.Number(float64(x))
		case int32:
			return chart.Number(float64(x))
		case int64:
			return chart.Number(float64(x))
		case float64:
			return chart.Number(x)
		}
		return fmt.Sprint(v)
	},
	// rate writes a per-second rate, "–" when unknown (negative).
	"rate": func(v float64) string {
		if v < 0 || math.IsNaN(v) {
			return "–"
		}
		return chart.Number(v) + "/s"
	},
	"ms": func(ms int64) string {
		if ms <= 0 {
			return "–"
		}
		return time.UnixMilli(ms).Format("2006-01-02 15:04:05.000")
	},
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "–"
		}
		return t.Format("2006-01-02 15:04:05")
	},
	"since": func(t, now time.Time) string {
		if t.IsZero() {
			return "–"
		}
		return roundDuration(now.Sub(t))
	},
	"join": strings.Join,
	"perm": permString,
	"pct": func(f float64) string {
		if f < 0 {
			return "–"
		}
		return fmt.Sprintf("%.0f%%", f*100)
	},
	"version": func(v int) string {
		if v <= 0 {
			return "–"
		}
		return protocol.VersionName(v)
	},
	"add":   func(a, b int) int { return a + b },
	"query": func(kv ...string) template.URL { return template.URL(queryOf(kv...)) },
}

func roundDuration(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	case d >= time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

func newPages() (*pages, error) {
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "assets/templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("console: templates: %w", err)
	}
	files, err := fs.Glob(assets, "assets/templates/*.html")
	if err != nil {
		return nil, err
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.Must(layout.Clone()).ParseFS(assets, f)
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", name, err)
		}
		p.byName[name] = t
	}
	return p, nil
}

func (c *Console) render(w http.ResponseWriter, status int, name string, p pageData) {
	t := c.pages.byName[name]
	var buf bytes.Buffer
	if t == nil {
		http.Error(w, "console: no template "+name, http.StatusInternalServerError)
		return
	}
	if err := t.ExecuteTemplate(&buf, "layout.html", p); err != nil {
		c.cfg.Logger.Error("console: render", "page", name, "err", err)
		http.Error(w, "console: the page could not be drawn: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// queryWithout is q's query string (with its "?") without keys.
func queryWithout(q url.Values, keys ...string) string {
	for _, k := range keys {
		q.Del(k)
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}
