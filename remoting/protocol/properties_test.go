package protocol

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestPropertiesText(t *testing.T) {
	got, err := ParseProperties("# comment\n! also\n\n a = 1 \nb:2\nc=x=y\nd:\n")
	want := map[string]string{"a": "1", "b": "2", "c": "x=y", "d": ""}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("parsed %v, %v", got, err)
	}
	if again, err := ParseProperties(FormatProperties(want)); err != nil || !reflect.DeepEqual(again, want) {
		t.Fatalf("round trip %v, %v", again, err)
	}
	if FormatProperties(want) != "a=1\nb=2\nc=x=y\nd=\n" {
		t.Fatalf("formatted %q", FormatProperties(want))
	}
	if _, err := ParseProperties("a=1\nno separator\n"); !errors.Is(err, ErrPropertiesSyntax) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("a line without separator: %v", err)
	}
}

// TestScanProperties: lines come in order with their numbers (comments and
// blanks counted), and fn's error stops the scan as it is.
func TestScanProperties(t *testing.T) {
	var got []string
	err := ScanProperties(strings.NewReader("# c\na=1\n\nb : 2\na=3\n"), func(n int, k, v string) error {
		got = append(got, fmt.Sprintf("%d %s %s", n, k, v))
		return nil
	})
	if want := []string{"2 a 1", "4 b 2", "5 a 3"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("scanned %q, %v; want %q", got, err, want)
	}
	stop := errors.New("stop")
	calls := 0
	err = ScanProperties(strings.NewReader("a=1\nb=2\nno separator\n"), func(int, string, string) error { calls++; return stop })
	if err != stop || calls != 1 {
		t.Fatalf("fn's error: %v after %d calls", err, calls)
	}
	if _, err := ParseProperties("a=1\n" + strings.Repeat("x", maxPropertiesLine+1)); err == nil || errors.Is(err, ErrPropertiesSyntax) {
		t.Fatalf("a line beyond the limit: %v", err)
	}
}
