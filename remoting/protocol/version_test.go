package protocol

import "testing"

// The ordinals of Java's MQVersion.Version at known points, and what the
// official clients send.
func TestVersionName(t *testing.T) {
	for v, want := range map[int]string{
		0: "V3_0_0_SNAPSHOT", 15: "V3_0_0_FINAL", 16: "V3_0_1_SNAPSHOT", 17: "V3_0_1", 45: "V3_0_15",
		46: "V3_1_0_SNAPSHOT", 86: "V3_3_1_SNAPSHOT", 211: "V3_9_9", 212: "V4_0_0_SNAPSHOT", 213: "V4_0_0",
		int(Version): "V4_5_2", 401: "V4_9_4", 413: "V5_0_0", 479: "V5_3_3", 611: "V5_9_9", 612: "HIGHER_VERSION",
		9999: "HIGHER_VERSION", -1: "-1",
	} {
		if got := VersionName(v); got != want {
			t.Errorf("VersionName(%d) = %s, want %s", v, got, want)
		}
	}
}
