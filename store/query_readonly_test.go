package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// TestQueryFileIsReadOnly keeps query.go to reads: every mutation is an Op
// through Apply, and a reader of the store finds them beside it (apply.go,
// put.go, putmeta.go), not among the lookups.
func TestQueryFileIsReadOnly(t *testing.T) {
	writes := map[string]bool{"Apply": true, "ApplyEncoded": true, "applyOp": true, "apply": true, "Put": true}
	if got := callsIn(t, "query.go", writes); len(got) != 0 {
		t.Fatalf("query.go writes: %v", got)
	}
	// The check must see a write where there is one.
	if got := callsIn(t, "putmeta.go", writes); len(got) == 0 {
		t.Fatal("putmeta.go: no Apply call seen; the check finds nothing")
	}
}

// callsIn lists the calls in file of a method or function named in names.
func callsIn(t *testing.T, file string, names map[string]bool) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		var name string
		switch fn := call.Fun.(type) {
		case *ast.SelectorExpr:
			name = fn.Sel.Name
		case *ast.Ident:
			name = fn.Name
		}
		if names[name] {
			out = append(out, fset.Position(call.Pos()).String()+": "+name)
		}
		return true
	})
	return out
}
