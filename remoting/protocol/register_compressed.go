package protocol

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// A REGISTER_BROKER body sent with the compressed ext field true (Java
// brokers with compressedRegister=true; RocketMQ RegisterBrokerBody.encode)
// is a zlib stream of length-prefixed parts, each length a big-endian
// int32:
//
//	len, DataVersion as JSON
//	count, then count times: len, a TopicConfig in its text form
//	len, the filter server list as a JSON array
//	count, then count times: len, a TopicQueueMappingInfo as JSON  (RocketMQ 5 on)
//
// A TopicConfig's text form is its fields joined by single spaces:
// topicName readQueueNums writeQueueNums perm topicFilterType, then, from
// RocketMQ 5, a sixth field: the attributes as JSON, empty when there are
// none. topicSysFlag and order do not travel in it.

// MaxInflatedRegisterBody bounds what a compressed REGISTER_BROKER body may
// inflate to: a broker with 100,000 topics needs under 10 MiB, and a body
// that inflates without bound must not take the name server's memory.
const MaxInflatedRegisterBody = 64 << 20

// ErrCompressedRegisterBody is wrapped by the errors of a compressed
// REGISTER_BROKER body that does not decode.
var ErrCompressedRegisterBody = errors.New("protocol: bad compressed register broker body")

// decodeCompressedRegisterBody inflates and decodes a compressed body.
func decodeCompressedRegisterBody(body []byte) (*RegisterBrokerBody, error) {
	zr, err := zlib.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCompressedRegisterBody, err)
	}
	// ReadAll grows with what actually inflates, up to the bound.
	plain, err := io.ReadAll(io.LimitReader(zr, MaxInflatedRegisterBody+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCompressedRegisterBody, err)
	}
	if len(plain) > MaxInflatedRegisterBody {
		return nil, fmt.Errorf("%w: inflates to more than %d bytes", ErrCompressedRegisterBody, MaxInflatedRegisterBody)
	}
	r := registerPartReader{b: plain}
	b := new(RegisterBrokerBody)
	w := &b.TopicConfigSerializeWrapper
	if err := json.Unmarshal(r.part("dataVersion"), &w.DataVersion); r.err == nil && err != nil {
		return nil, fmt.Errorf("%w: dataVersion: %w", ErrCompressedRegisterBody, err)
	}
	n := r.count("topic count")
	w.TopicConfigTable = make(map[string]TopicConfig, min(n, 1024))
	for i := 0; i < n && r.err == nil; i++ {
		tc, err := ParseTopicConfigText(string(r.part("topic config")))
		if r.err == nil && err != nil {
			return nil, fmt.Errorf("%w: topic config %d: %w", ErrCompressedRegisterBody, i, err)
		}
		w.TopicConfigTable[tc.TopicName] = tc
	}
	filters := r.part("filter server list")
	if r.err != nil {
		return nil, r.err
	}
	if err := json.Unmarshal(filters, &b.FilterServerList); err != nil {
		// Java logs and goes on with an empty list.
		b.FilterServerList = nil
	}
	// RocketMQ 4 stops here; 5 adds the queue mappings of static topics,
	// which Runnel does not keep but must read past.
	if len(r.b) > 0 {
		for i, n := 0, r.count("mapping count"); i < n && r.err == nil; i++ {
			r.part("topic queue mapping")
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	return b, nil
}

// registerPartReader reads length-prefixed parts and keeps the first error.
type registerPartReader struct {
	b   []byte
	err error
}

func (r *registerPartReader) count(what string) int {
	if r.err != nil {
		return 0
	}
	if len(r.b) < 4 {
		r.err = fmt.Errorf("%w: truncated before the %s", ErrCompressedRegisterBody, what)
		return 0
	}
	n := int(int32(binary.BigEndian.Uint32(r.b)))
	r.b = r.b[4:]
	if n < 0 {
		r.err = fmt.Errorf("%w: %s %d", ErrCompressedRegisterBody, what, n)
		return 0
	}
	return n
}

func (r *registerPartReader) part(what string) []byte {
	n := r.count(what + " length")
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.err = fmt.Errorf("%w: %s of %d bytes, %d left", ErrCompressedRegisterBody, what, n, len(r.b))
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

// ParseTopicConfigText decodes a TopicConfig's text form (RocketMQ
// TopicConfig.decode). Attributes that are not a JSON object of strings are
// dropped, as Java drops them.
func ParseTopicConfigText(s string) (TopicConfig, error) {
	f := strings.SplitN(s, " ", 6)
	if len(f) < 5 {
		return TopicConfig{}, fmt.Errorf("%q has %d fields, want at least 5", s, len(f))
	}
	tc := TopicConfig{TopicName: f[0], TopicFilterType: f[4]}
	for i, p := range []*int{&tc.ReadQueueNums, &tc.WriteQueueNums, &tc.Perm} {
		n, err := strconv.ParseInt(f[1+i], 10, 32)
		if err != nil {
			return TopicConfig{}, fmt.Errorf("%q: field %d is not an integer", s, 2+i)
		}
		*p = int(n)
	}
	if tc.TopicFilterType != TopicFilterSingleTag && tc.TopicFilterType != TopicFilterMultiTag {
		return TopicConfig{}, fmt.Errorf("%q: unknown topic filter type %q", s, tc.TopicFilterType)
	}
	if len(f) == 6 && f[5] != "" {
		var attrs map[string]string
		if json.Unmarshal([]byte(f[5]), &attrs) == nil {
			tc.Attributes = attrs
		}
	}
	return tc, nil
}

// TopicConfigText returns tc's text form, as RocketMQ 5's TopicConfig.encode.
func TopicConfigText(tc TopicConfig) string {
	filter := tc.TopicFilterType
	if filter == "" {
		filter = TopicFilterSingleTag
	}
	s := fmt.Sprintf("%s %d %d %d %s ", tc.TopicName, tc.ReadQueueNums, tc.WriteQueueNums, tc.Perm, filter)
	if tc.Attributes != nil {
		a, _ := json.Marshal(tc.Attributes) // a map of strings always encodes
		s += string(a)
	}
	return s
}

// EncodeCompressed returns the body in the compressed form a Java broker
// with compressedRegister=true sends, without topic queue mappings; send it
// with the compressed ext field true.
func (b *RegisterBrokerBody) EncodeCompressed() ([]byte, error) {
	var plain []byte
	part := func(p []byte) {
		plain = binary.BigEndian.AppendUint32(plain, uint32(len(p)))
		plain = append(plain, p...)
	}
	w := b.TopicConfigSerializeWrapper
	dv, err := json.Marshal(w.DataVersion)
	if err != nil {
		return nil, err
	}
	part(dv)
	plain = binary.BigEndian.AppendUint32(plain, uint32(len(w.TopicConfigTable)))
	for _, tc := range w.TopicConfigTable {
		part([]byte(TopicConfigText(tc)))
	}
	filters := b.FilterServerList
	if filters == nil {
		filters = []string{}
	}
	fl, err := json.Marshal(filters)
	if err != nil {
		return nil, err
	}
	part(fl)
	plain = binary.BigEndian.AppendUint32(plain, 0) // no topic queue mappings
	var out bytes.Buffer
	zw, err := zlib.NewWriterLevel(&out, zlib.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(plain); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
