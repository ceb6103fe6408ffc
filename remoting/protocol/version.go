package protocol

import "fmt"

// VersionName returns the name of RocketMQ's MQVersion.Version with
// ordinal v, the number every command carries in its version field:
// VersionName(317) is "V4_5_2" (what the official Go client announces),
// VersionName(401) "V4_9_4". A number past the last release Java knows of
// is "HIGHER_VERSION", as MQVersion.getVersionDesc; a negative one is
// shown as a number.
//
// The ordinals follow Java's enum, which is regular after its first
// entries: sixteen 3.0.0 pre-releases (SNAPSHOT, ALPHA1, BETA1..BETA9 with
// their snapshots, FINAL), then a _SNAPSHOT and a release per version:
// 3.0.1..3.0.15, 3.1.0..3.2.9, 3.3.1..3.9.9 (patch 1..9), then
// 4.0.0..5.9.9.
func VersionName(v int) string {
	if v < 0 {
		return fmt.Sprint(v)
	}
	if v < len(v300Names) {
		return v300Names[v]
	}
	i := v - len(v300Names)
	for _, r := range versionRuns {
		n := 2 * (r.lastPatch - r.firstPatch + 1)
		if i < n {
			name := fmt.Sprintf("V%d_%d_%d", r.major, r.minor, r.firstPatch+i/2)
			if i%2 == 0 {
				name += "_SNAPSHOT"
			}
			return name
		}
		i -= n
	}
	return "HIGHER_VERSION"
}

var v300Names = []string{
	"V3_0_0_SNAPSHOT", "V3_0_0_ALPHA1", "V3_0_0_BETA1", "V3_0_0_BETA2", "V3_0_0_BETA3", "V3_0_0_BETA4", "V3_0_0_BETA5",
	"V3_0_0_BETA6_SNAPSHOT", "V3_0_0_BETA6", "V3_0_0_BETA7_SNAPSHOT", "V3_0_0_BETA7", "V3_0_0_BETA8_SNAPSHOT", "V3_0_0_BETA8",
	"V3_0_0_BETA9_SNAPSHOT", "V3_0_0_BETA9", "V3_0_0_FINAL",
}

// versionRun is one minor version's patches in MQVersion.Version's order.
type versionRun struct{ major, minor, firstPatch, lastPatch int }

var versionRuns = func() []versionRun {
	runs := []versionRun{{3, 0, 1, 15}, {3, 1, 0, 9}, {3, 2, 0, 9}}
	for minor := 3; minor <= 9; minor++ {
		runs = append(runs, versionRun{3, minor, 1, 9})
	}
	for major := 4; major <= 5; major++ {
		for minor := 0; minor <= 9; minor++ {
			runs = append(runs, versionRun{major, minor, 0, 9})
		}
	}
	return runs
}()
