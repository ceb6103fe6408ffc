// Package version owns the version every Runnel binary reports with
// --version: one string, settable at link time and otherwise read from the
// build information Go embeds.
//
//	go build -ldflags '-X github.com/runnelmq/runnel/internal/version.Version=v0.3.0' ./cmd/...
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is the release, set with -ldflags -X. Empty: the main module's
// version from the build info ("(devel)" for a build in a checkout).
var Version = ""

// String is the line --version prints: "runnel v0.3.0 (commit 1a2b3c4d5e6f,
// go1.24.0)", the commit and "+dirty" when Go recorded them.
func String() string {
	v := Version
	commit, dirty := "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	extra := runtime.Version()
	if commit != "" {
		if len(commit) > 12 {
			commit = commit[:12]
		}
		if dirty {
			commit += "+dirty"
		}
		extra = "commit " + commit + ", " + extra
	}
	return fmt.Sprintf("runnel %s (%s)", v, extra)
}
