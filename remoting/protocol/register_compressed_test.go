package protocol

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

// javaCompressedBody builds a compressed REGISTER_BROKER body the way
// RocketMQ's RegisterBrokerBody.encode(true) writes it: a zlib stream
// (Deflater.BEST_COMPRESSION) of int32-length-prefixed parts. mappings adds
// RocketMQ 5's topic queue mapping section; RocketMQ 4 ends before it.
func javaCompressedBody(t *testing.T, topics []string, mappings []string) []byte {
	t.Helper()
	var plain bytes.Buffer
	part := func(s string) {
		binary.Write(&plain, binary.BigEndian, int32(len(s)))
		plain.WriteString(s)
	}
	part(`{"counter":7,"stateVersion":0,"timestamp":1700000000123}`)
	binary.Write(&plain, binary.BigEndian, int32(len(topics)))
	for _, tc := range topics {
		part(tc)
	}
	part(`["10.0.0.9:30000"]`)
	if mappings != nil {
		binary.Write(&plain, binary.BigEndian, int32(len(mappings)))
		for _, m := range mappings {
			part(m)
		}
	}
	var out bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&out, zlib.BestCompression)
	zw.Write(plain.Bytes())
	zw.Close()
	return out.Bytes()
}

func TestDecodeCompressedRegisterBody(t *testing.T) {
	// RocketMQ 5's TopicConfig.encode ends with a separator and the
	// attributes (JSON, or nothing); RocketMQ 4's has five fields.
	topics := []string{
		`TBW102 8 8 7 SINGLE_TAG `,
		`orders 4 2 6 SINGLE_TAG {"+message.type":"FIFO"}`,
		`legacy 16 16 6 MULTI_TAG`,
	}
	want := map[string]TopicConfig{
		"TBW102": {TopicName: "TBW102", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 7, TopicFilterType: TopicFilterSingleTag},
		"orders": {TopicName: "orders", ReadQueueNums: 4, WriteQueueNums: 2, Perm: 6, TopicFilterType: TopicFilterSingleTag,
			Attributes: map[string]string{"+message.type": "FIFO"}},
		"legacy": {TopicName: "legacy", ReadQueueNums: 16, WriteQueueNums: 16, Perm: 6, TopicFilterType: TopicFilterMultiTag},
	}
	for name, mappings := range map[string][]string{
		"rocketmq4":          nil,
		"rocketmq5":          {},
		"rocketmq5 mappings": {`{"bname":"b","epoch":1,"topic":"static","totalQueues":4,"currIdMap":{"0":0}}`},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := DecodeRegisterBrokerBody(javaCompressedBody(t, topics, mappings), true)
			if err != nil {
				t.Fatal(err)
			}
			w := b.TopicConfigSerializeWrapper
			if w.DataVersion != (DataVersion{Timestamp: 1700000000123, Counter: 7}) {
				t.Fatalf("data version %+v", w.DataVersion)
			}
			if !reflect.DeepEqual(w.TopicConfigTable, want) {
				t.Fatalf("topics\n%+v\nwant\n%+v", w.TopicConfigTable, want)
			}
			if !reflect.DeepEqual(b.FilterServerList, []string{"10.0.0.9:30000"}) {
				t.Fatalf("filter servers %q", b.FilterServerList)
			}
		})
	}

	// Our encoder writes what the decoder (and Java's) reads.
	b := &RegisterBrokerBody{TopicConfigSerializeWrapper: TopicConfigSerializeWrapper{
		TopicConfigTable: want, DataVersion: DataVersion{Timestamp: 5, Counter: 2},
	}}
	enc, err := b.EncodeCompressed()
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeRegisterBrokerBody(enc, true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.TopicConfigSerializeWrapper, b.TopicConfigSerializeWrapper) || len(got.FilterServerList) != 0 {
		t.Fatalf("round trip %+v", got)
	}

	full := javaCompressedBody(t, topics, nil)
	zlibOf := func(p []byte) []byte {
		var out bytes.Buffer
		zw := zlib.NewWriter(&out)
		zw.Write(p)
		zw.Close()
		return out.Bytes()
	}
	for name, body := range map[string][]byte{
		"not zlib":       []byte(`{"topicConfigSerializeWrapper":{}}`),
		"truncated zlib": full[:len(full)/2],
		"truncated part": zlibOf([]byte{0, 0, 0, 50, '{', '}'}),
		"negative count": zlibOf(binary.BigEndian.AppendUint32([]byte{0, 0, 0, 2, '{', '}'}, 0xFFFFFFFF)),
		"bad topic":      javaCompressedBody(t, []string{"t x 1 6 SINGLE_TAG"}, nil),
		"short topic":    javaCompressedBody(t, []string{"t 1 1 6"}, nil),
		"bad filter":     javaCompressedBody(t, []string{"t 1 1 6 EVERY_TAG"}, nil),
	} {
		if _, err := DecodeRegisterBrokerBody(body, true); !errors.Is(err, ErrCompressedRegisterBody) {
			t.Errorf("%s: %v, want ErrCompressedRegisterBody", name, err)
		}
	}
}

// FuzzDecodeCompressedRegisterBody feeds the compressed form's part reader
// with inflated bytes directly (zlib itself is not ours to fuzz); a body
// that decodes must survive its own re-encoding.
func FuzzDecodeCompressedRegisterBody(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x02{}\x00\x00\x00\x01\x00\x00\x00\x11t 1 1 6 SINGLE_TAG\x00\x00\x00\x02[]"))
	f.Add([]byte("\x00\x00\x00\x02{}\x00\x00\x00\x00\x00\x00\x00\x02[]\x00\x00\x00\x01\x00\x00\x00\x02{}"))
	f.Fuzz(func(t *testing.T, plain []byte) {
		var out bytes.Buffer
		zw := zlib.NewWriter(&out)
		zw.Write(plain)
		zw.Close()
		b, err := DecodeRegisterBrokerBody(out.Bytes(), true)
		if err != nil {
			if !errors.Is(err, ErrCompressedRegisterBody) {
				t.Fatalf("error %v does not wrap ErrCompressedRegisterBody", err)
			}
			return
		}
		enc, err := b.EncodeCompressed()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeRegisterBrokerBody(enc, true); err != nil {
			// A topic name with a space does not survive Java's text form
			// either; anything else must.
			for name := range b.TopicConfigSerializeWrapper.TopicConfigTable {
				if bytes.ContainsAny([]byte(name), " ") {
					return
				}
			}
			t.Fatalf("re-encoded body does not decode: %v", err)
		}
	})
}
