package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Browser tests: headless Chromium (Debian's chromium package) driven by
// chromedp clicks through the console's pages against an in-process
// cluster. They wait for what the page shows, never for a fixed time.
// Without a browser they skip, except under CI=true, where a missing
// browser fails them (.ci/run installs it). Each page's screenshot is
// written to RUNNEL_SCREENSHOTS, or to $TMPDIR/runnel-console-screenshots,
// and the log names every file.

// chromiumPath finds the browser: RUNNEL_CHROMIUM, else chromium on the
// PATH (Debian's package), else the other usual names.
func chromiumPath() string {
	if p := os.Getenv("RUNNEL_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser is one headless Chromium with one tab, closed at cleanup.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
	dir  string // screenshots
	shot atomic.Int32
}

func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no Chromium for the browser tests: install Debian's chromium package (apt-get install -y chromium) or set RUNNEL_CHROMIUM")
		}
		t.Skip("no Chromium (apt-get install -y chromium, or set RUNNEL_CHROMIUM): browser tests skipped")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1400, 1000), chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc() // waits for the browser to exit
	})
	dir := os.Getenv("RUNNEL_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "runnel-console-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t, ctx: ctx, base: strings.TrimSuffix(base, "/"), dir: dir}
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return b
}

// do runs steps, failing the test with what it was doing.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.rawScreenshot("failed-" + strings.ReplaceAll(what, " ", "-"))
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b *browser) open(path string) {
	b.t.Helper()
	b.do("open "+path, chromedp.Navigate(b.base+path))
	b.waitFor(path+" loaded", `document.readyState === "complete" && document.querySelector("h1") !== null`)
}

// js quotes s for a JavaScript expression.
func js(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// waitFor waits until the JavaScript condition holds. The page may be
// navigating or refreshing meanwhile: an evaluation that fails on that is
// tried again, until a minute has passed.
func (b *browser) waitFor(what, cond string) {
	b.t.Helper()
	expr := fmt.Sprintf(`(() => { try { return !!(%s); } catch (e) { return false; } })()`, cond)
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](expr))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) || b.ctx.Err() != nil {
			b.rawScreenshot("failed-wait")
			body, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
			b.t.Fatalf("waiting for %s: %v\npage text:\n%s", what, err, body)
		}
		<-tick.C
	}
}

// waitText waits until the element sel holds text.
func (b *browser) waitText(sel, text string) {
	b.t.Helper()
	b.waitFor(fmt.Sprintf("%q in %s", text, sel), fmt.Sprintf(`document.querySelector(%s).textContent.includes(%s)`, js(sel), js(text)))
}

// heading waits for a page whose h1 is title.
func (b *browser) heading(title string) { b.t.Helper(); b.waitText("h1", title) }

func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

// fill sets the field sel to text as typing would, with the input and
// change events a page hears. (Typing keys into a field with a datalist
// opens its suggestions, a popup of its own that leaves chromedp's tab
// unanswered now and then: the value is set instead.)
func (b *browser) fill(sel, text string) {
	b.t.Helper()
	b.waitFor(sel+" to fill", fmt.Sprintf(`document.querySelector(%s) !== null`, js(sel)))
	expr := fmt.Sprintf(`(() => { const el = document.querySelector(%s); el.focus(); el.value = %s;
		el.dispatchEvent(new Event("input", {bubbles: true})); el.dispatchEvent(new Event("change", {bubbles: true})); el.blur(); return el.value; })()`, js(sel), js(text))
	got, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](expr))
	if err != nil || got != text {
		b.rawScreenshot("failed-fill")
		b.t.Fatalf("fill %s: %q, %v", sel, got, err)
	}
}

// choose picks option value of the select sel.
func (b *browser) choose(sel, value string) { b.t.Helper(); b.fill(sel, value) }

// click clicks the element sel once it is there: a click event the page
// handles as a person's (a link navigates, a button submits its form).
func (b *browser) click(sel string) {
	b.t.Helper()
	b.waitFor(sel+" to click", fmt.Sprintf(`document.querySelector(%s) !== null`, js(sel)))
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(document.querySelector(%s).click(), true)`, js(sel)))); err != nil {
		b.rawScreenshot("failed-click")
		b.t.Fatalf("click %s: %v", sel, err)
	}
}

// screenshot writes the whole page as NN-name.png and logs the path.
// rawScreenshot is screenshot without waiting, for a test that is failing.
func (b *browser) rawScreenshot(name string) {
	if png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100)); err == nil {
		path := filepath.Join(b.dir, fmt.Sprintf("%s-%02d-%s.png", b.t.Name(), b.shot.Add(1), name))
		if os.WriteFile(path, png, 0o644) == nil {
			b.t.Logf("screenshot: %s", path)
		}
	}
}

func (b *browser) screenshot(name string) string {
	b.t.Helper()
	// The page must be laid out: a capture taken while it loads, or
	// while a live part is swapped, can find no width; it is tried again.
	var png []byte
	var err error
	for try := 0; try < 20; try++ {
		b.waitFor("a laid out page", `document.readyState === "complete" && document.body && document.body.scrollWidth > 0`)
		if png, err = chromedp.Run(b.ctx, chromedp.FullScreenshot(100)); err == nil {
			break
		}
	}
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(b.dir, fmt.Sprintf("%s-%02d-%s.png", b.t.Name(), b.shot.Add(1), name))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
	return path
}

// noErrorBox fails when the page shows the console's error box.
func (b *browser) noErrorBox(where string) {
	b.t.Helper()
	n, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`document.querySelectorAll(".error").length`))
	if err != nil || n != 0 {
		b.rawScreenshot("unexpected-error")
		b.t.Fatalf("%s shows an error (%d, %v): %s", where, n, err, b.text("main"))
	}
}
