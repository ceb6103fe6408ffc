// Package lint holds repository-wide checks that keep the architecture
// honest: which packages may import which.
package lint

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/runnelmq/runnel"

// rules maps a package prefix (relative to the module root) to the module
// packages it must never import. The direction is
// cmd -> broker/namesrv/client -> remoting -> remoting/protocol, and
// broker -> store; acl (signatures, plain_acl.yml) sits beside remoting,
// used by broker, namesrv and client alike; message (the message and its
// stored record), topicconf (the topic config) and groupconf (the group
// config) sit below both
// remoting/protocol and store, which never import each other.
var rules = []struct {
	pkg       string
	forbidden []string
	why       string
}{
	{"message", []string{"acl", "remoting", "broker", "namesrv", "client", "store", "cmd", "integration", "internal", "topicconf", "groupconf"}, "the stored record is shared by the wire and the store, so it imports neither"},
	{"topicconf", []string{"acl", "remoting", "broker", "namesrv", "client", "store", "cmd", "integration", "internal"}, "the topic config is shared by the wire and the store, so it imports neither"},
	{"groupconf", []string{"acl", "remoting", "broker", "namesrv", "client", "store", "cmd", "integration", "internal", "topicconf", "message"}, "the group config is shared by the wire and the store, so it imports neither"},
	{"acl", []string{"broker", "namesrv", "client", "store", "cmd", "integration"}, "access control is shared by every role"},
	{"remoting/protocol", []string{"remoting", "broker", "namesrv", "client", "store", "cmd", "integration"}, "wire types only"},
	{"remoting", []string{"broker", "namesrv", "client", "store", "cmd", "integration"}, "transport knows no roles"},
	{"store", []string{"remoting", "broker", "namesrv", "client", "cmd", "integration"}, "the store is below the broker and knows no wire"},
	{"client", []string{"broker", "namesrv", "store", "cmd", "integration"}, "the client must work against any RocketMQ broker"},
	{"namesrv", []string{"broker", "client", "store", "cmd", "integration"}, "the name server stands alone"},
	{"broker", []string{"namesrv", "client", "cmd", "integration"}, "the broker does not embed a client or name server"},
	{"console", []string{"broker", "namesrv", "store", "cmd", "integration"}, "the console works against any RocketMQ cluster: it reaches it through client/admin only"},
	{"broker/remotingdoor", append([]string{"broker/registration", "broker/replica", "broker/config"}, otherDoors("broker/remotingdoor")...), "a door adapts one protocol onto the core and knows no other door, nor the process's parts"},
	{"broker/grpcdoor", append([]string{"broker/registration", "broker/replica", "broker/config"}, otherDoors("broker/grpcdoor")...), "a door adapts one protocol onto the core and knows no other door, nor the process's parts"},
}

// doors are the broker's front doors: each adapts one protocol onto the
// core, and nothing below the process imports one.
var doors = []string{"broker/remotingdoor", "broker/grpcdoor"}

func otherDoors(self string) []string {
	var out []string
	for _, d := range doors {
		if d != self {
			out = append(out, d)
		}
	}
	return out
}

// coreSide are the core and the tables it wires, and the replicated
// group's backend: they speak the core's own types, so any door (and
// raft's apply) calls them without building a wire request. They import
// no remoting package at all (the shared message, topicconf and
// groupconf types are theirs to use), no door, and not the process's
// registration or configuration.
var coreSide = []string{"broker/core", "broker/clients", "broker/lock", "broker/longpoll", "broker/offsets",
	"broker/filter", "broker/transaction", "broker/consumercall", "broker/due", "broker/pop", "broker/replica"}

func init() {
	for _, pkg := range coreSide {
		rules = append(rules, struct {
			pkg       string
			forbidden []string
			why       string
		}{pkg, append([]string{"remoting", "namesrv", "client", "cmd", "integration", "broker/registration", "broker/config"}, doors...),
			"the core and its tables speak their own types: no wire, no door, no process parts"})
	}
}

// consoleImports are the only module packages the console may import:
// it reaches the cluster through the admin client alone (never raw
// remoting, never our own producer or consumer), and uses the wire's and
// the client's types.
var consoleImports = []string{"client/admin", "client/queue", "client/trace", "remoting/protocol", "message", "topicconf", "groupconf", "console"}

// pure packages hold logic tested without sockets.
var pure = []string{"message", "topicconf", "groupconf", "acl", "namesrv/routeinfo", "broker/lock", "broker/longpoll", "broker/clients", "broker/offsets", "broker/filter", "broker/core", "client/rebalance", "remoting/protocol"}

var networkImports = []string{"net", "net/http", "github.com/cloudwego/netpoll"}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Clean(filepath.Join(dir, "..", ".."))
}

// imports returns, per package directory (relative, slash-separated), the
// import paths of its non-test Go files.
func imports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		for _, imp := range f.Imports {
			out[rel] = append(out[rel], strings.Trim(imp.Path.Value, `"`))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func under(pkg, prefix string) bool {
	return pkg == prefix || strings.HasPrefix(pkg, prefix+"/")
}

func TestImportDirection(t *testing.T) {
	all := imports(t, repoRoot(t))
	if len(all) == 0 {
		t.Fatal("no Go packages found; is the repo root right?")
	}
	for _, v := range violations(all) {
		t.Error(v)
	}
}

// violations lists every import in all that breaks the rules.
func violations(all map[string][]string) []string {
	var out []string
	for pkg, imps := range all {
		// The most specific rule wins: remoting/protocol is under remoting.
		best := -1
		for i, r := range rules {
			if under(pkg, r.pkg) && (best < 0 || len(r.pkg) > len(rules[best].pkg)) {
				best = i
			}
		}
		if best < 0 {
			continue
		}
		r := rules[best]
		for _, imp := range imps {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			target := strings.TrimPrefix(imp, module+"/")
			for _, f := range r.forbidden {
				if under(target, f) && !under(target, r.pkg) {
					out = append(out, pkg+" imports "+target+": forbidden ("+r.why+")")
				}
			}
		}
	}
	return out
}

func TestPurePackagesHaveNoNetwork(t *testing.T) {
	all := imports(t, repoRoot(t))
	for pkg, imps := range all {
		isPure := false
		for _, p := range pure {
			if under(pkg, p) {
				isPure = true
			}
		}
		if !isPure {
			continue
		}
		for _, imp := range imps {
			for _, n := range networkImports {
				if imp == n {
					t.Errorf("%s imports %s: pure logic must not touch the network", pkg, imp)
				}
			}
		}
	}
}

// TestRulesCatchViolations feeds the rule table imports that break it, so
// a table that silently matches nothing fails here.
func TestRulesCatchViolations(t *testing.T) {
	bad := map[string][]string{
		"client":              {module + "/broker"},
		"client/rebalance":    {module + "/store/meta"},
		"remoting/protocol":   {module + "/remoting"},
		"store":               {module + "/broker/lock"},
		"namesrv":             {module + "/client"},
		"topicconf":           {module + "/store/meta"},
		"groupconf":           {module + "/remoting/protocol"},
		"message":             {module + "/remoting/protocol"},
		"store/commitlog":     {module + "/remoting/protocol"},
		"broker/core":         {module + "/remoting/protocol"},
		"broker/replica":      {module + "/remoting"},
		"broker/clients":      {module + "/broker/remotingdoor"},
		"broker/remotingdoor": {module + "/broker/grpcdoor"},
	}
	if got := violations(bad); len(got) != len(bad) {
		t.Fatalf("caught %d of %d violations: %v", len(got), len(bad), got)
	}
	good := map[string][]string{
		"broker":              {module + "/store", module + "/remoting/protocol", module + "/broker/remotingdoor"},
		"broker/core":         {module + "/message", module + "/topicconf", module + "/broker/clients", module + "/store"},
		"broker/replica":      {module + "/broker/core"},
		"broker/remotingdoor": {module + "/broker/core", module + "/remoting/protocol"},
		"remoting":            {module + "/remoting/protocol"},
		"client/rebalance":    {module + "/client/queue"},
		"store/meta":          {module + "/topicconf", module + "/groupconf"},
		"store":               {module + "/message"},
		"remoting/protocol":   {module + "/message", module + "/topicconf", module + "/groupconf"},
	}
	if got := violations(good); len(got) != 0 {
		t.Fatalf("allowed imports reported: %v", got)
	}
}

func TestConsoleReachesTheClusterThroughAdminOnly(t *testing.T) {
	all := imports(t, repoRoot(t))
	found := false
	for pkg, imps := range all {
		if !under(pkg, "console") {
			continue
		}
		found = true
		for _, imp := range imps {
			target, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			allowed := false
			for _, a := range consoleImports {
				if target == a || a == "console" && under(target, a) {
					allowed = true
				}
			}
			if !allowed {
				t.Errorf("%s imports %s: the console may import only %v", pkg, target, consoleImports)
			}
		}
	}
	if !found {
		t.Fatal("no console package found")
	}
}
