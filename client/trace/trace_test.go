package trace

import (
	"strings"
	"testing"
)

// Records as the official Go client writes them (internal/trace.go).
var (
	pubRecord = strings.Join([]string{"Pub", "1700000000000", "DefaultRegion", "pg", "T", "ID1", "tag", "k1",
		"127.0.0.1:10911", "5", "3", "0", "OFF1", "true", "10.0.0.1"}, FieldSeparator) + RecordSeparator
	subBefore = strings.Join([]string{"SubBefore", "1700000000100", "DefaultRegion", "cg", "REQ1", "ID1", "0", "k1", "10.0.0.2"}, FieldSeparator) + RecordSeparator
	subAfter  = strings.Join([]string{"SubAfter", "REQ1", "ID1", "7", "false", "k1", "0", "1700000000107", "cg"}, FieldSeparator) + RecordSeparator
	otherSub  = strings.Join([]string{"SubBefore", "1700000000100", "DefaultRegion", "cg", "REQ2", "ID2", "0", "null", "10.0.0.2"}, FieldSeparator) + RecordSeparator
)

func TestOfPicksTheMessagesRecords(t *testing.T) {
	recs := Of("ID1", []string{pubRecord, subBefore + otherSub + subAfter})
	if len(recs) != 3 {
		t.Fatalf("got %d records, want Pub, SubBefore, SubAfter of ID1: %+v", len(recs), recs)
	}
	pub, before, after := recs[0], recs[1], recs[2]
	if pub.Type != "Pub" || pub.Group != "pg" || pub.ClientHost != "10.0.0.1" || pub.CostMs != 3 ||
		pub.Success == nil || !*pub.Success || pub.OffsetMsgID != "OFF1" || pub.StoreHost != "127.0.0.1:10911" {
		t.Fatalf("pub: %+v", pub)
	}
	if before.Type != "SubBefore" || before.Group != "cg" || before.ClientHost != "10.0.0.2" || before.Time != 1700000000100 {
		t.Fatalf("sub before: %+v", before)
	}
	if after.Type != "SubAfter" || after.CostMs != 7 || after.Success == nil || *after.Success ||
		after.ClientHost != "10.0.0.2" || after.Group != "cg" {
		t.Fatalf("sub after (host from its SubBefore): %+v", after)
	}
}

func TestParseSkipsJunk(t *testing.T) {
	for _, body := range []string{"", "Pub", "Pub\x01x", "Unknown\x01a\x01b\x01c\x01d\x01e\x01f", "\x02\x02", "SubAfter\x01a"} {
		if recs := Parse(body); len(recs) != 0 {
			t.Errorf("Parse(%q) = %+v, want none", body, recs)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(pubRecord + subBefore + subAfter)
	f.Add(otherSub)
	f.Add("Pub\x01\x01\x01")
	f.Fuzz(func(t *testing.T, body string) {
		for _, r := range Parse(body) {
			switch r.Type {
			case "Pub", "SubBefore", "SubAfter":
			default:
				t.Fatalf("record of type %q", r.Type)
			}
		}
	})
}
