package message

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
)

func sampleMessages(t testing.TB) []*MessageExt {
	t.Helper()
	big := bytes.Repeat([]byte("compress me "), 1000)
	zbody, err := Compress(big, 5)
	if err != nil {
		t.Fatal(err)
	}
	return []*MessageExt{
		{
			Message: Message{Topic: "TopicA", Flag: 7, Body: []byte("hello"),
				Properties: map[string]string{PropertyTags: "TagA", PropertyKeys: "k1 k2", PropertyUniqClientMessageIDKey: "C0A800010001000000000000000A0001"}},
			QueueID: 3, QueueOffset: 42, CommitLogOffset: 1000, BornTimestamp: 1700000000123,
			BornHost:       netip.MustParseAddrPort("10.1.2.3:54321"),
			StoreTimestamp: 1700000000456, StoreHost: netip.MustParseAddrPort("127.0.0.1:20911"),
			ReconsumeTimes: 2, PreparedTransactionOffset: 9, SysFlag: SysFlagTransactionPrep,
		},
		{ // IPv6 born host, IPv4 store host, no properties, empty body
			Message: Message{Topic: "%RETRY%group", Body: nil},
			QueueID: 0, QueueOffset: 0, CommitLogOffset: 1 << 40,
			BornHost: netip.MustParseAddrPort("[2001:db8::1]:1234"), StoreHost: netip.MustParseAddrPort("192.168.0.9:10911"),
		},
		{ // IPv6 store host, compressed body
			Message: Message{Topic: "Z", Body: zbody, Properties: map[string]string{PropertyTags: "TagB"}},
			SysFlag: SysFlagCompressed, QueueID: 15, QueueOffset: 1 << 33, CommitLogOffset: 77,
			BornHost:  netip.MustParseAddrPort("1.1.1.1:1"),
			StoreHost: netip.MustParseAddrPort("[fe80::aa:bb]:65535"),
		},
	}
}

func encodeAll(t testing.TB, ms []*MessageExt) []byte {
	t.Helper()
	var b []byte
	for _, m := range ms {
		var err error
		if b, err = AppendStoredMessage(b, m); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func TestStoredSizeFormula(t *testing.T) {
	m := sampleMessages(t)[0]
	b, err := AppendStoredMessage(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	want := 91 + len(m.Body) + len(m.Topic) + len(MarshalProperties(m.Properties))
	if len(b) != want || StoredSize(m) != want {
		t.Fatalf("size %d, StoredSize %d, want %d (fact sheet formula)", len(b), StoredSize(m), want)
	}
}

// TestOfficialClientDecodes checks every field the Go client reads from our
// encoding, which is what a PULL body must satisfy.
func TestOfficialClientDecodes(t *testing.T) {
	ms := sampleMessages(t)
	got := primitive.DecodeMessage(encodeAll(t, ms))
	if len(got) != len(ms) {
		t.Fatalf("client decoded %d messages, want %d", len(got), len(ms))
	}
	hostStr := func(ap netip.AddrPort) string {
		ip := ap.Addr().AsSlice()
		return fmt.Sprintf("%s:%d", net.IP(ip).String(), ap.Port())
	}
	for i, w := range ms {
		g := got[i]
		body := w.Body
		if w.SysFlag&SysFlagCompressed != 0 {
			body, _ = Decompress(w.Body, 0)
		}
		sysFlag := w.SysFlag
		if w.BornHost.Addr().Is6() {
			sysFlag |= SysFlagBornHostV6
		}
		if w.StoreHost.Addr().Is6() {
			sysFlag |= SysFlagStoreHostV6
		}
		checks := []struct {
			name      string
			got, want any
		}{
			{"StoreSize", g.StoreSize, int32(StoredSize(w))},
			{"BodyCRC", g.BodyCRC, BodyCRC(w.Body)},
			{"QueueId", g.Queue.QueueId, int(w.QueueID)},
			{"Flag", g.Flag, w.Flag},
			{"QueueOffset", g.QueueOffset, w.QueueOffset},
			{"CommitLogOffset", g.CommitLogOffset, w.CommitLogOffset},
			{"SysFlag", g.SysFlag, sysFlag},
			{"BornTimestamp", g.BornTimestamp, w.BornTimestamp},
			{"BornHost", g.BornHost, hostStr(w.BornHost)},
			{"StoreTimestamp", g.StoreTimestamp, w.StoreTimestamp},
			{"StoreHost", g.StoreHost, hostStr(w.StoreHost)},
			{"ReconsumeTimes", g.ReconsumeTimes, w.ReconsumeTimes},
			{"PreparedTransactionOffset", g.PreparedTransactionOffset, w.PreparedTransactionOffset},
			{"Body", string(g.Body), string(body)},
			{"Topic", g.Topic, w.Topic},
			{"OffsetMsgId", g.OffsetMsgId, OffsetMsgID(w.StoreHost, w.CommitLogOffset)},
		}
		for _, c := range checks {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("msg %d %s: client got %v, want %v", i, c.name, c.got, c.want)
			}
		}
		props := g.GetProperties()
		if len(w.Properties) == 0 && len(props) != 0 || len(w.Properties) > 0 && !reflect.DeepEqual(props, w.Properties) {
			t.Errorf("msg %d properties: client got %v, want %v", i, props, w.Properties)
		}
		wantID := w.UniqKey()
		if wantID == "" {
			wantID = OffsetMsgID(w.StoreHost, w.CommitLogOffset)
		}
		if g.MsgId != wantID {
			t.Errorf("msg %d MsgId %q, want %q", i, g.MsgId, wantID)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	ms := sampleMessages(t)
	b := encodeAll(t, ms)
	for _, inflate := range []bool{false, true} {
		var got []*MessageExt
		var err error
		if inflate {
			got, err = DecodeMessages(b)
		} else {
			got, err = DecodeMessagesRaw(b)
		}
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range ms {
			g := got[i]
			want := *w
			want.StoreSize = int32(StoredSize(w))
			want.BodyCRC = BodyCRC(w.Body)
			if w.BornHost.Addr().Is6() {
				want.SysFlag |= SysFlagBornHostV6
			}
			if w.StoreHost.Addr().Is6() {
				want.SysFlag |= SysFlagStoreHostV6
			}
			want.OffsetMsgID = OffsetMsgID(w.StoreHost, w.CommitLogOffset)
			want.MsgID = w.UniqKey()
			if want.MsgID == "" {
				want.MsgID = want.OffsetMsgID
			}
			if inflate && w.SysFlag&SysFlagCompressed != 0 {
				want.Body, _ = Decompress(w.Body, 0)
			}
			if want.Properties == nil {
				want.Properties = map[string]string{}
			}
			if len(want.Body) == 0 {
				want.Body, g.Body = nil, nil
			}
			if !reflect.DeepEqual(g, &want) {
				t.Errorf("inflate=%v msg %d:\n got %+v\nwant %+v", inflate, i, g, &want)
			}
			// Re-encoding what we decoded (raw) gives the same bytes.
			if !inflate {
				re, _ := AppendStoredMessage(nil, g)
				orig, _ := AppendStoredMessage(nil, w)
				if !bytes.Equal(re, orig) {
					t.Errorf("msg %d: re-encoding differs", i)
				}
			}
		}
	}
}

func TestPatch(t *testing.T) {
	for i, m := range sampleMessages(t) {
		rec, _ := AppendStoredMessage(nil, m)
		PatchQueueOffset(rec, 123456789)
		PatchPhysicalOffset(rec, 987654321)
		PatchStoreTimestamp(rec, 1111)
		got, err := DecodeMessagesRaw(rec)
		if err != nil {
			t.Fatal(err)
		}
		g := got[0]
		if g.QueueOffset != 123456789 || g.CommitLogOffset != 987654321 || g.StoreTimestamp != 1111 {
			t.Errorf("msg %d: patched fields %d %d %d", i, g.QueueOffset, g.CommitLogOffset, g.StoreTimestamp)
		}
		if g.BornTimestamp != m.BornTimestamp || g.BornHost != m.BornHost || g.StoreHost != m.StoreHost {
			t.Errorf("msg %d: patch clobbered a neighbour", i)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	good := encodeAll(t, sampleMessages(t)[:1])
	badMagic := bytes.Clone(good)
	badMagic[4] = 0
	bigSize := bytes.Clone(good)
	bigSize[0] = 0x7f
	shortSize := bytes.Clone(good)
	shortSize[3] = byte(len(good) - 1) // totalSize one less than the fields
	bodyOver := bytes.Clone(good)
	// body length field sits after the IPv4 hosts: 4*5+8*2+4+8+8+8+8+4+8 = 84
	bodyOver[84] = 0x7f
	cases := map[string][]byte{
		"truncated":  good[:len(good)-1],
		"3 bytes":    good[:3],
		"bad magic":  badMagic,
		"size>len":   bigSize,
		"size<field": shortSize,
		"body over":  bodyOver,
		"trailing":   append(bytes.Clone(good), 0, 0, 0, 9),
	}
	for name, b := range cases {
		if _, err := DecodeMessages(b); !errors.Is(err, ErrMalformedMessage) {
			t.Errorf("%s: err = %v, want ErrMalformedMessage", name, err)
		}
	}
}

func TestAppendTooLarge(t *testing.T) {
	m := &MessageExt{Message: Message{Topic: strings.Repeat("t", 256)}}
	if _, err := AppendStoredMessage(nil, m); !errors.Is(err, ErrMessageTooLarge) {
		t.Errorf("long topic: %v", err)
	}
	m = &MessageExt{Message: Message{Topic: "t", Properties: map[string]string{"k": strings.Repeat("v", 40000)}}}
	if _, err := AppendStoredMessage(nil, m); !errors.Is(err, ErrMessageTooLarge) {
		t.Errorf("long properties: %v", err)
	}
}

func TestProperties(t *testing.T) {
	p := map[string]string{"TAGS": "a", "KEYS": "x y", "EMPTY": ""}
	s := MarshalProperties(p)
	if s != "EMPTY\x01\x02KEYS\x01x y\x02TAGS\x01a\x02" {
		t.Fatalf("marshal: %q", s)
	}
	if got := UnmarshalProperties(s); !reflect.DeepEqual(got, p) {
		t.Fatalf("unmarshal: %v", got)
	}
	// Malformed entries are skipped as the Go client skips them.
	got := UnmarshalProperties("a\x01b\x02junk\x02c\x01d\x01e\x02f\x01g")
	if !reflect.DeepEqual(got, map[string]string{"a": "b", "f": "g"}) {
		t.Fatalf("lenient parse: %v", got)
	}
	m := Message{Properties: UnmarshalProperties(s)}
	if m.Tags() != "a" || !reflect.DeepEqual(m.Keys(), []string{"x", "y"}) {
		t.Fatalf("helpers: %q %v", m.Tags(), m.Keys())
	}
}

// Encoding from pre-sorted properties (what the store does, to walk each
// message's map once) gives the same bytes and size as from the map, and
// appends after whatever dst already holds.
func TestEncodeFromSortedProperties(t *testing.T) {
	for i, m := range sampleMessages(t) {
		want, err := AppendStoredMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		props := SortProperties([]Property{{"earlier", "message"}}, m.Properties)[1:]
		if !sortedByName(props) || len(props) != len(m.Properties) {
			t.Fatalf("message %d: %v not sorted, or not all of %v", i, props, m.Properties)
		}
		for _, p := range props {
			if PropertyOf(props, p.Name) != m.Properties[p.Name] {
				t.Fatalf("message %d: PropertyOf(%q) = %q", i, p.Name, PropertyOf(props, p.Name))
			}
		}
		got, err := AppendStoredMessageOf([]byte("x"), m, props)
		if err != nil || !bytes.Equal(got[1:], want) || StoredSizeOf(m, props) != len(want) || StoredSize(m) != len(want) {
			t.Fatalf("message %d: %v; sized %d and %d, encoded %d", i, err, StoredSizeOf(m, props), StoredSize(m), len(want))
		}
	}
	if PropertyOf(nil, PropertyTags) != "" {
		t.Fatal("a missing property is not empty")
	}
}

func sortedByName(props []Property) bool {
	for i := 1; i < len(props); i++ {
		if props[i-1].Name >= props[i].Name {
			return false
		}
	}
	return true
}

func TestOffsetMsgID(t *testing.T) {
	cases := []struct {
		host netip.AddrPort
		off  int64
		want string
	}{
		{netip.MustParseAddrPort("127.0.0.1:20911"), 1000, "7F000001000051AF00000000000003E8"}, // fact sheet example
		{netip.MustParseAddrPort("[2001:db8::1]:10911"), 1 << 40, ""},
	}
	for _, c := range cases {
		id := OffsetMsgID(c.host, c.off)
		if c.want != "" && id != c.want {
			t.Errorf("OffsetMsgID = %s, want %s", id, c.want)
		}
		ip := c.host.Addr().AsSlice()
		if g := primitive.CreateMessageId(ip, int32(c.host.Port()), c.off); g != id {
			t.Errorf("client CreateMessageId = %s, ours %s", g, id)
		}
		h, off, err := ParseOffsetMsgID(id)
		if err != nil || h != c.host || off != c.off {
			t.Errorf("Parse(%s) = %v %d %v", id, h, off, err)
		}
		cm, err := primitive.UnmarshalMsgID([]byte(id))
		if err != nil {
			t.Fatal(err)
		}
		wantAddr := c.host.Addr().String()
		if c.host.Addr().Is6() {
			wantAddr = "[" + wantAddr + "]"
		}
		if cm.Addr != wantAddr || cm.Port != int(c.host.Port()) || cm.Offset != c.off {
			t.Errorf("client UnmarshalMsgID(%s) = %+v", id, cm)
		}
	}
	for _, bad := range []string{"", "XYZ", strings.Repeat("G", 32), "7F000001FFFFFFFF00000000000003E8"} {
		if _, _, err := ParseOffsetMsgID(bad); !errors.Is(err, ErrBadMessageID) {
			t.Errorf("Parse(%q) err = %v", bad, err)
		}
	}
}

func TestUniqID(t *testing.T) {
	g := NewUniqIDGenerator(netip.MustParseAddr("192.0.2.4"))
	now := time.Date(2026, 3, 2, 0, 0, 1, 500e6, time.UTC)
	a, b := g.next(now), g.next(now)
	if len(a) != 32 || a == b {
		t.Fatalf("ids %q %q", a, b)
	}
	if !strings.HasPrefix(a, "C0000204") {
		t.Fatalf("prefix of %q", a)
	}
	// ms since month start = (1 day + 1.5 s) = 86401500 = 0x052661dc
	if a[20:28] != "052661DC" || a[28:] != "0001" || b[28:] != "0002" {
		t.Fatalf("tail of %q / %q", a, b)
	}
	// All uppercase, as Java writes them.
	if id := NewUniqID(); len(id) != 32 || strings.ToUpper(id) != id {
		t.Fatalf("NewUniqID %q", id)
	}
	// Two generators in one process keep their own hosts (a broker and a
	// client in runnel dev).
	h := NewUniqIDGenerator(netip.MustParseAddr("198.51.100.7"))
	if x, y := g.Next(), h.Next(); !strings.HasPrefix(x, "C0000204") || !strings.HasPrefix(y, "C6336407") {
		t.Fatalf("ids of two hosts: %q %q", x, y)
	}
	// IPv6 or no host: a random address, still 32 uppercase digits.
	if id := NewUniqIDGenerator(netip.MustParseAddr("::1")).Next(); len(id) != 32 {
		t.Fatalf("IPv6 host id %q", id)
	}
}

func TestDecompressLimit(t *testing.T) {
	z, _ := Compress(make([]byte, 1<<20), 5)
	if _, err := Decompress(z, 1000); !errors.Is(err, ErrDecompress) {
		t.Fatalf("limit not enforced: %v", err)
	}
	if _, err := Decompress([]byte("not zlib"), 0); !errors.Is(err, ErrDecompress) {
		t.Fatalf("garbage: %v", err)
	}
}

func FuzzDecodeMessages(f *testing.F) {
	ms := sampleMessages(f)
	f.Add(encodeAll(f, ms))
	for _, m := range ms {
		b, _ := AppendStoredMessage(nil, m)
		f.Add(b)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := DecodeMessagesRaw(b)
		if err != nil {
			return
		}
		// Decoded records account for every byte, and re-encode without error.
		total := 0
		for _, m := range got {
			total += int(m.StoreSize)
			if _, err := AppendStoredMessage(nil, m); err != nil {
				t.Fatal(err)
			}
		}
		if total != len(b) {
			t.Fatalf("records cover %d of %d bytes", total, len(b))
		}
		_, _ = DecodeMessages(b)
	})
}
