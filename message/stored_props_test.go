package message

import (
	"net/netip"
	"testing"
)

func TestStoredPropertiesAndLookup(t *testing.T) {
	m := &MessageExt{
		Message:   Message{Topic: "T", Properties: map[string]string{"a": "1", "TAGS": "x", "empty": ""}, Body: []byte("body")},
		StoreHost: netip.MustParseAddrPort("127.0.0.1:10911"),
		BornHost:  netip.MustParseAddrPort("[::1]:5000"),
	}
	m.SysFlag |= SysFlagBornHostV6
	rec, err := AppendStoredMessage(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	props, ok := StoredProperties(rec)
	if !ok {
		t.Fatal("no properties found")
	}
	want := UnmarshalProperties(string(props))
	if len(want) != 3 || want["a"] != "1" || want["TAGS"] != "x" {
		t.Fatalf("properties %q decode to %v", props, want)
	}
	for _, name := range []string{"a", "TAGS", "empty", "missing"} {
		v, ok := LookupProperty(props, name)
		w, wok := want[name]
		if v != w || ok != wok {
			t.Errorf("%s: got %q %v, want %q %v", name, v, ok, w, wok)
		}
	}
	for n := range len(rec) {
		if p, ok := StoredProperties(rec[:n]); ok && len(p) == len(props) {
			t.Fatalf("a record cut at %d still gave its properties", n)
		}
	}
	if _, ok := LookupProperty([]byte("a\x01b\x01c\x02\x01x\x02a"), "a"); ok {
		t.Fatal("malformed entries must be skipped as UnmarshalProperties skips them")
	}
}
