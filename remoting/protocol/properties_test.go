package protocol

import (
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
	if _, err := ParseProperties("a=1\nno separator\n"); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("a line without separator: %v", err)
	}
}
