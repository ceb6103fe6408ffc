package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The whole program at a small scale, so that it cannot rot: two stores
// built, the real broker binary restarted on each and measured over the
// wire for a round.
func TestSmokeBuildAndMeasure(t *testing.T) {
	dir := t.TempDir()
	big, small := filepath.Join(dir, "big"), filepath.Join(dir, "small")
	for _, s := range []struct {
		dir  string
		msgs int64
	}{{big, 3000}, {small, 100}} {
		res, err := build(buildSpec{Dir: s.dir, Msgs: s.msgs, Size: 16, Batch: 1024, Topic: defaultTopic}, t.Output())
		if err != nil {
			t.Fatal(err)
		}
		if res.MaxOffset != s.msgs || res.DiskBytes <= 0 {
			t.Fatalf("built %d messages in %d bytes, want %d", res.MaxOffset, res.DiskBytes, s.msgs)
		}
	}
	if _, err := build(buildSpec{Dir: small, Msgs: 1, Size: 1, Batch: 1, Topic: defaultTopic}, t.Output()); err == nil {
		t.Fatal("build over an existing store: no error")
	}
	t.Setenv("NAMESRV_ADDR", "")
	spec := measureSpec{Bin: buildBroker(t), Dirs: []string{big, small}, Topic: defaultTopic, Rounds: 2, Pulls: 20, Holds: 3, Behind: 4}
	var seen []string
	rounds, err := measure(context.Background(), spec, func(round int, dir string, r storeRound) {
		seen = append(seen, filepath.Base(dir))
		if r.Serving <= 0 || r.Pull <= 0 || r.Held <= 0 {
			t.Errorf("round %d, %s: %+v", round, dir, r)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(seen, " "); got != "big small small big" || len(rounds) != 2 {
		t.Fatalf("stores measured in the order %q, %d rounds; want them alternating", got, len(rounds))
	}
	// The held pulls of round 0 added to both stores.
	if r := rounds[1][0]; r.MaxOffsetBefore != 3000+3 {
		t.Fatalf("the big store's second round started at offset %d, want %d", r.MaxOffsetBefore, 3003)
	}
}

// buildBroker builds cmd/broker from the main module (the one bench's
// replace directive names).
func buildBroker(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/runnelmq/runnel").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "broker")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/broker")
	cmd.Dir = strings.TrimSpace(string(out))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/broker: %v\n%s", err, out)
	}
	return bin
}
