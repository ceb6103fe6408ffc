package docscheck

import (
	"os"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestComposeVolumesFollowProfiles: compose creates every volume the file
// declares at the top level, whatever profiles are on, so a named volume
// used only by a profile's services (the replicated group's) would be
// created without them (issue 38). Each declared volume must be used by a
// service that always runs, and a profile's services keep their data in
// anonymous volumes.
func TestComposeVolumesFollowProfiles(t *testing.T) {
	b, err := os.ReadFile(root(t, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]struct {
			Profiles []string `yaml:"profiles"`
			Volumes  []string `yaml:"volumes"`
		} `yaml:"services"`
		Volumes map[string]any `yaml:"volumes"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Services) == 0 || len(f.Volumes) == 0 {
		t.Fatalf("read %d services and %d volumes: not the compose file this test knows", len(f.Services), len(f.Volumes))
	}
	usedAlways := map[string]bool{}
	profiled := 0
	for name, svc := range f.Services {
		for _, v := range svc.Volumes {
			src, _, named := strings.Cut(v, ":")
			if !named || strings.HasPrefix(src, "/") || strings.HasPrefix(src, ".") {
				continue // anonymous, or a bind mount
			}
			if len(svc.Profiles) > 0 {
				t.Errorf("service %s (profiles %v) uses the named volume %s, which compose creates even when its profiles are off", name, svc.Profiles, src)
				continue
			}
			usedAlways[src] = true
		}
		if len(svc.Profiles) > 0 && len(svc.Volumes) > 0 {
			profiled++
		}
	}
	for v := range f.Volumes {
		if !usedAlways[v] {
			t.Errorf("volume %s is declared but no service that always runs uses it", v)
		}
	}
	if profiled == 0 || !slices.ContainsFunc(f.Services["broker-g0"].Volumes, func(v string) bool { return v == "/data" }) {
		t.Errorf("the group's nodes keep no store volume: %+v", f.Services["broker-g0"])
	}
}
