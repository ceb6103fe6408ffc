package message

import (
	"errors"
	"testing"
)

func TestRecallHandle(t *testing.T) {
	h := RecallHandle{Topic: "T", Broker: "broker-a", Due: 1_700_000_000_123, UniqKey: "7F0000010001000000000000000A0001"}
	got, err := DecodeRecallHandle(h.Encode())
	if err != nil || got != h {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	// Java's HandleV1.buildHandle of the same fields, by hand: the same text.
	if want := "djEgVCBicm9rZXItYSAxNzAwMDAwMDAwMTIzIDdGMDAwMDAxMDAwMTAwMDAwMDAwMDAwMDAwMEEwMDAx"; h.Encode() != want {
		t.Errorf("encoded %s, want %s", h.Encode(), want)
	}
	for _, bad := range []string{"", "%%%", "djEgVA==" /* "v1 T" */, "djIgVCBiIDEgaw==" /* v2 */, "djEgVCBiIHNvb24gaw==" /* due "soon" */} {
		if _, err := DecodeRecallHandle(bad); !errors.Is(err, ErrBadRecallHandle) {
			t.Errorf("DecodeRecallHandle(%q) = %v, want ErrBadRecallHandle", bad, err)
		}
	}
}

func FuzzRecallHandle(f *testing.F) {
	f.Add(RecallHandle{Topic: "T", Broker: "b", Due: 5, UniqKey: "k"}.Encode())
	f.Add("djEgVCBiIDEgaw==")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := DecodeRecallHandle(s)
		if err != nil {
			if !errors.Is(err, ErrBadRecallHandle) {
				t.Fatalf("error %v is not ErrBadRecallHandle", err)
			}
			return
		}
		again, err := DecodeRecallHandle(h.Encode())
		if err != nil || again != h {
			t.Fatalf("%+v does not round-trip: %+v, %v", h, again, err)
		}
	})
}
