package protocol

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// TestEveryResponseCodeInTheTable: each Resp* constant has its entry (a
// name and a meaning), so no code a server answers reads as unknown.
func TestEveryResponseCodeInTheTable(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		vs, ok := node.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || !strings.HasPrefix(vs.Names[0].Name, "Resp") {
			return true
		}
		n++
		text := ""
		switch v := vs.Values[0].(type) {
		case *ast.BasicLit:
			text = v.Value
		case *ast.UnaryExpr:
			text = v.Op.String() + v.X.(*ast.BasicLit).Value
		}
		code, err := strconv.ParseInt(text, 10, 16)
		if err != nil {
			t.Fatalf("%s = %s: %v", vs.Names[0].Name, text, err)
		}
		if c, ok := responseCodes[int16(code)]; !ok || c.Code != int16(code) || c.Name == "" || c.Meaning == "" {
			t.Errorf("%s (%d): table entry %+v", vs.Names[0].Name, code, c)
		}
		return true
	})
	if n != len(responseCodes) {
		t.Errorf("%d Resp constants, %d table entries", n, len(responseCodes))
	}
	if c := ResponseCodeOf(9999); c.Name != "CODE_9999" || c.Retriable {
		t.Errorf("unknown code: %+v", c)
	}
	for _, code := range []int16{RespTopicNotExist, RespServiceNotAvailable, RespSystemError, RespNoPermission, RespNoBuyerID, RespNotInCurrentUnit} {
		if !ResponseCodeOf(code).Retriable {
			t.Errorf("%s is not retriable; Java's producer retries it", ResponseCodeName(code))
		}
	}
}
