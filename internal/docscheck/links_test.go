package docscheck

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// pages are README.md and every page of docs/, relative to the root.
func pages(t *testing.T) []string {
	t.Helper()
	out := []string{"README.md"}
	docs, err := filepath.Glob(root(t, "docs/*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	for _, d := range docs {
		out = append(out, "docs/"+filepath.Base(d))
	}
	return out
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(root(t, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// unfenced is md with its fenced code blocks blanked.
func unfenced(md string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			line = ""
		}
		if fenced {
			line = ""
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// prose is md without code, fenced or inline, where brackets are not
// links.
func prose(md string) string { return inlineCode.ReplaceAllString(unfenced(md), "``") }

var (
	inlineCode = regexp.MustCompile("`[^`]*`")
	link       = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading    = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *#*$`)
)

// anchors are the ids GitHub gives md's headings: lower case, spaces as
// hyphens, punctuation dropped, a repeated one numbered.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(unfenced(md), -1) {
		text := strings.ReplaceAll(m[1], "`", "")
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		base := b.String()
		id := base
		for n := 1; out[id]; n++ {
			id = base + "-" + strconv.Itoa(n)
		}
		out[id] = true
	}
	return out
}

// TestLinksResolve: every relative link of README.md and docs/*.md names a
// file of the tree, and every anchor a heading of its page.
func TestLinksResolve(t *testing.T) {
	checked := 0
	for _, page := range pages(t) {
		md := read(t, page)
		for _, m := range link.FindAllStringSubmatch(prose(md), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			dest := page
			if path != "" {
				dest = filepath.ToSlash(filepath.Join(filepath.Dir(page), path))
				if _, err := os.Stat(root(t, dest)); err != nil {
					t.Errorf("%s: link %s: %s does not exist", page, target, dest)
					continue
				}
			}
			checked++
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(dest, ".md") {
				t.Errorf("%s: link %s: an anchor in a file that is not markdown", page, target)
				continue
			}
			if !anchors(read(t, dest))[frag] {
				t.Errorf("%s: link %s: %s has no heading #%s", page, target, dest, frag)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d relative links checked: is the link pattern still right?", checked)
	}
}

// TestAnchors checks the heading ids GitHub makes, on which the links
// above rely.
func TestAnchors(t *testing.T) {
	got := anchors("# Coming from RocketMQ\n## ACL 2.0: users and rules\n## `runnel dev`\n```\n# not a heading\n```\n## Two\n## Two\n")
	for _, want := range []string{"coming-from-rocketmq", "acl-20-users-and-rules", "runnel-dev", "two", "two-1"} {
		if !got[want] {
			t.Errorf("no anchor %q in %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a line in a code block made an anchor")
	}
}

// TestQuickStartIsWhatTheScriptRuns: the README's quick start and its
// harness example are marked where scripts/quickstart.sh finds them (it
// runs the commands and the test), and the quick start holds the commands.
func TestQuickStartIsWhatTheScriptRuns(t *testing.T) {
	readme, script := read(t, "README.md"), read(t, "scripts/quickstart.sh")
	for _, marker := range []string{"<!-- quickstart -->", "<!-- /quickstart -->", "<!-- harness -->"} {
		// The script's awk patterns escape the slash.
		inScript := strings.Contains(script, marker) || strings.Contains(script, strings.ReplaceAll(marker, "/", `\/`))
		if strings.Count(readme, marker) != 1 || !inScript {
			t.Errorf("%s: %d in README.md, in quickstart.sh %v; want one, and the script to look for it",
				marker, strings.Count(readme, marker), inScript)
		}
	}
	_, block, _ := strings.Cut(readme, "<!-- quickstart -->")
	block, _, _ = strings.Cut(block, "<!-- /quickstart -->")
	var cmds []string
	for _, line := range strings.Split(block, "\n") {
		if strings.HasPrefix(line, "bin/") {
			cmds = append(cmds, line)
		}
	}
	if len(cmds) < 3 || !slices.ContainsFunc(cmds, func(c string) bool { return strings.HasPrefix(c, "bin/runnel dev") }) {
		t.Errorf("the quick start's commands %q: want bin/runnel dev and the CLIs after it", cmds)
	}
	_, example, _ := strings.Cut(readme, "<!-- harness -->")
	example = strings.TrimSpace(example)
	if !strings.HasPrefix(example, "```go\npackage ") || !strings.Contains(example, "\nfunc Test") {
		t.Errorf("no Go test file right after the harness marker:\n%.200s", example)
	}
}

// TestReadmeStaysShort: the README is a user's path; detail goes to docs/.
func TestReadmeStaysShort(t *testing.T) {
	if n := len(read(t, "README.md")); n > 16000 {
		t.Errorf("README.md is %d bytes; keep it under 16,000 and move detail to a page of docs/", n)
	}
}
