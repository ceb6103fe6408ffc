package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wireFree are the broker packages below the wire: the core every front
// door calls, and the tables it wires. They may use RocketMQ's types
// (remoting/protocol: codes, headers, bodies; package message: the stored
// record) but
// never the transport, and never a remoting command: a gRPC front door or
// raft's apply must be able to call them without building one.
var wireFree = []string{"broker/core", "broker/clients", "broker/lock", "broker/longpoll", "broker/offsets", "broker/due", "broker/filter", "broker/transaction", "broker/consumercall"}

// wireNames are the remoting/protocol identifiers that are the wire itself.
var wireNames = map[string]bool{"Command": true, "NewRequest": true, "NewResponse": true}

func TestCoreKnowsNoWire(t *testing.T) {
	root := repoRoot(t)
	seen := 0
	for _, pkg := range wireFree {
		dir := filepath.Join(root, filepath.FromSlash(pkg))
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			continue
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			seen++
			for _, v := range wireUses(t, f, src) {
				t.Errorf("%s: %s", pkg, v)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no core files found; is the repo root right?")
	}
}

// wireUses lists what in one Go file reaches the wire: an import of the
// transport or the network, or a remoting command named through its
// remoting/protocol import.
func wireUses(t *testing.T, name string, src []byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	protoName := ""
	for _, imp := range f.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		switch {
		case path == module+"/remoting":
			out = append(out, "imports "+path+": the core never sees the transport")
		case path == module+"/remoting/protocol":
			protoName = "protocol"
			if imp.Name != nil {
				protoName = imp.Name.Name
			}
		}
		for _, n := range networkImports {
			if path == n {
				out = append(out, "imports "+path+": the core never touches the network")
			}
		}
	}
	if protoName == "" {
		return out
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == protoName && wireNames[sel.Sel.Name] {
			out = append(out, fset.Position(sel.Pos()).String()+": names protocol."+sel.Sel.Name)
		}
		return true
	})
	return out
}

// TestWireUsesCatchViolations shows the check fails on a file that breaks
// it, so a check that silently matches nothing fails here.
func TestWireUsesCatchViolations(t *testing.T) {
	bad := `package core
import (
	"github.com/runnelmq/runnel/remoting"
	p "github.com/runnelmq/runnel/remoting/protocol"
)
func f(c *remoting.Conn, req *p.Command) { _ = p.NewResponse(req, 0, "") }
`
	if got := wireUses(t, "bad.go", []byte(bad)); len(got) != 3 {
		t.Fatalf("caught %d of 3 uses: %v", len(got), got)
	}
	good := `package core
import "github.com/runnelmq/runnel/remoting/protocol"
var _ = protocol.RespSuccess
var _ protocol.MessageExt
`
	if got := wireUses(t, "good.go", []byte(good)); len(got) != 0 {
		t.Fatalf("allowed uses reported: %v", got)
	}
}
