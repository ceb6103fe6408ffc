package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestVersionFlag(t *testing.T) {
	var out bytes.Buffer
	cmd := newCommand(&out, &bytes.Buffer{}, func(string) string { return "" })
	cmd.SetArgs([]string{"--version"})
	if err := cmd.Execute(); err != nil || !strings.HasPrefix(out.String(), "runnel ") {
		t.Fatalf("--version: %v %q", err, out.String())
	}
}
