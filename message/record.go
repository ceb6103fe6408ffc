package message

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net/netip"
)

// MagicV1 is the stored-message magic code every record carries (Java
// MESSAGE_MAGIC_CODE). The Go client reads a 1-byte topic length whatever
// the magic says, so V2 (2-byte topic length) is never written.
const MagicV1 int32 = -626843481 // 0xDAA320A7

// Fixed positions inside a stored record. Everything up to the born host is
// at a fixed offset; storeTimestamp moves with the born host's family.
const (
	StoredTotalSizePos    = 0
	StoredMagicPos        = 4
	StoredBodyCRCPos      = 8
	StoredQueueIDPos      = 12
	StoredFlagPos         = 16
	StoredQueueOffsetPos  = 20
	StoredPhysOffsetPos   = 28
	StoredSysFlagPos      = 36
	StoredBornTimePos     = 40
	StoredBornHostPos     = 48
	storedMinSize         = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + 8 + 8 + 8 + 4 + 8 + 4 + 1 + 2
	maxStoredTopicLen     = 255
	maxStoredPropertiesLn = 32767
)

// ErrMalformedMessage is returned (wrapped) for stored-message bytes that do
// not decode: truncated, with an impossible length, or with a bad magic.
var ErrMalformedMessage = errors.New("message: malformed stored message")

// ErrMessageTooLarge is returned by AppendStoredMessage for a topic longer
// than 255 bytes or properties longer than 32767 bytes, which the layout
// cannot express.
var ErrMessageTooLarge = errors.New("message: message field too large")

// BodyCRC is Java's UtilAll.crc32: CRC-32 (IEEE) masked to a non-negative int32.
func BodyCRC(body []byte) int32 {
	return int32(crc32.ChecksumIEEE(body) & 0x7FFFFFFF)
}

func hostLen(ap netip.AddrPort) int {
	if ap.Addr().Is6() && !ap.Addr().Is4In6() {
		return 16 + 4
	}
	return 4 + 4
}

// StoredSize returns the encoded size of m: 91 + body + topic + properties
// for IPv4 hosts, plus 12 per IPv6 host.
func StoredSize(m *MessageExt) int { return storedSize(m, PropertiesLen(m.Properties)) }

// StoredSizeOf is StoredSize for m whose properties were sorted into props
// (SortProperties); m.Properties is not read.
func StoredSizeOf(m *MessageExt, props []Property) int {
	return storedSize(m, sortedPropertiesLen(props))
}

func storedSize(m *MessageExt, propsLen int) int {
	return storedMinSize - 16 + hostLen(m.BornHost) + hostLen(m.StoreHost) +
		len(m.Body) + len(m.Topic) + propsLen
}

// StoreTimestampPos returns the position of storeTimestamp in a record with
// the given sysFlag.
func StoreTimestampPos(sysFlag int32) int {
	if sysFlag&SysFlagBornHostV6 != 0 {
		return StoredBornHostPos + 20
	}
	return StoredBornHostPos + 8
}

// AppendStoredMessage appends m in RocketMQ's stored-message layout (magic
// V1) to dst. The totalSize, bodyCRC and the host-family sysFlag bits are
// computed from m; m.StoreSize, m.BodyCRC, m.MsgID and m.OffsetMsgID are
// ignored. The body is written as given (already compressed if sysFlag bit0
// says so). On error dst is returned unchanged.
func AppendStoredMessage(dst []byte, m *MessageExt) ([]byte, error) {
	var small [8]Property // most messages have a handful of properties
	return AppendStoredMessageOf(dst, m, SortProperties(small[:0], m.Properties))
}

// AppendStoredMessageOf is AppendStoredMessage for m whose properties were
// sorted into props (SortProperties); m.Properties is not read.
func AppendStoredMessageOf(dst []byte, m *MessageExt, props []Property) ([]byte, error) {
	if len(m.Topic) > maxStoredTopicLen {
		return dst, fmt.Errorf("%w: topic of %d bytes", ErrMessageTooLarge, len(m.Topic))
	}
	propsLen := sortedPropertiesLen(props)
	if propsLen > maxStoredPropertiesLn {
		return dst, fmt.Errorf("%w: properties of %d bytes", ErrMessageTooLarge, propsLen)
	}
	size := storedSize(m, propsLen)
	if size > 1<<31-1 {
		return dst, fmt.Errorf("%w: record of %d bytes", ErrMessageTooLarge, size)
	}
	sysFlag := m.SysFlag &^ sysFlagHostFamilyBits
	if hostLen(m.BornHost) == 20 {
		sysFlag |= SysFlagBornHostV6
	}
	if hostLen(m.StoreHost) == 20 {
		sysFlag |= SysFlagStoreHostV6
	}
	be := binary.BigEndian
	dst = be.AppendUint32(dst, uint32(size))
	dst = be.AppendUint32(dst, 0xDAA320A7) // MagicV1
	dst = be.AppendUint32(dst, uint32(BodyCRC(m.Body)))
	dst = be.AppendUint32(dst, uint32(m.QueueID))
	dst = be.AppendUint32(dst, uint32(m.Flag))
	dst = be.AppendUint64(dst, uint64(m.QueueOffset))
	dst = be.AppendUint64(dst, uint64(m.CommitLogOffset))
	dst = be.AppendUint32(dst, uint32(sysFlag))
	dst = be.AppendUint64(dst, uint64(m.BornTimestamp))
	dst = appendHost(dst, m.BornHost)
	dst = be.AppendUint64(dst, uint64(m.StoreTimestamp))
	dst = appendHost(dst, m.StoreHost)
	dst = be.AppendUint32(dst, uint32(m.ReconsumeTimes))
	dst = be.AppendUint64(dst, uint64(m.PreparedTransactionOffset))
	dst = be.AppendUint32(dst, uint32(len(m.Body)))
	dst = append(dst, m.Body...)
	dst = append(dst, byte(len(m.Topic)))
	dst = append(dst, m.Topic...)
	dst = be.AppendUint16(dst, uint16(propsLen))
	dst = AppendSortedProperties(dst, props)
	return dst, nil
}

func appendHost(dst []byte, ap netip.AddrPort) []byte {
	a := ap.Addr()
	switch {
	case a.Is4() || a.Is4In6():
		b := a.Unmap().As4()
		dst = append(dst, b[:]...)
	case a.Is6():
		b := a.As16()
		dst = append(dst, b[:]...)
	default: // the zero AddrPort
		dst = append(dst, 0, 0, 0, 0)
	}
	return binary.BigEndian.AppendUint32(dst, uint32(ap.Port()))
}

// PatchQueueOffset overwrites the queueOffset of an encoded record.
func PatchQueueOffset(rec []byte, off int64) {
	binary.BigEndian.PutUint64(rec[StoredQueueOffsetPos:], uint64(off))
}

// PatchPhysicalOffset overwrites the physicalOffset (commitLogOffset) of an
// encoded record.
func PatchPhysicalOffset(rec []byte, off int64) {
	binary.BigEndian.PutUint64(rec[StoredPhysOffsetPos:], uint64(off))
}

// PatchStoreTimestamp overwrites the storeTimestamp of an encoded record.
func PatchStoreTimestamp(rec []byte, ts int64) {
	sysFlag := int32(binary.BigEndian.Uint32(rec[StoredSysFlagPos:]))
	binary.BigEndian.PutUint64(rec[StoreTimestampPos(sysFlag):], uint64(ts))
}

// StoredTopic returns the topic bytes of an encoded record without decoding
// the rest; ok is false if the record is too short to hold them.
func StoredTopic(rec []byte) (topic []byte, ok bool) {
	if len(rec) < StoredSysFlagPos+4 {
		return nil, false
	}
	sysFlag := int32(binary.BigEndian.Uint32(rec[StoredSysFlagPos:]))
	pos := StoreTimestampPos(sysFlag) + 8 + 8 + 4 + 8 // storeTimestamp, storeHost (v4), reconsumeTimes, preparedTxOffset
	if sysFlag&SysFlagStoreHostV6 != 0 {
		pos += 12
	}
	if pos+4 > len(rec) {
		return nil, false
	}
	pos += 4 + int(binary.BigEndian.Uint32(rec[pos:]))
	if pos < 0 || pos+1 > len(rec) {
		return nil, false
	}
	n := int(rec[pos])
	if pos+1+n > len(rec) {
		return nil, false
	}
	return rec[pos+1 : pos+1+n], true
}

// StoredRecordSize reads the totalSize of the record at the start of b and
// checks it against the bytes present and the fixed minimum.
func StoredRecordSize(b []byte) (int, error) {
	if len(b) < 4 {
		return 0, fmt.Errorf("%w: %d bytes left, need a size", ErrMalformedMessage, len(b))
	}
	n := int(int32(binary.BigEndian.Uint32(b)))
	if n < storedMinSize || n > len(b) {
		return 0, fmt.Errorf("%w: totalSize %d with %d bytes left", ErrMalformedMessage, n, len(b))
	}
	return n, nil
}

// DecodeMessages decodes records laid end to end (a PULL body), inflating
// zlib bodies whose sysFlag bit0 is set, as the official Go client does (on
// an inflate failure the body is left as stored). It never panics; any
// truncation or inconsistency is an ErrMalformedMessage.
func DecodeMessages(b []byte) ([]*MessageExt, error) {
	return decodeMessages(b, true)
}

// DecodeMessagesRaw is DecodeMessages without inflation: bodies stay exactly
// as stored, which is what send-back, DLQ and transactions need.
func DecodeMessagesRaw(b []byte) ([]*MessageExt, error) {
	return decodeMessages(b, false)
}

// decodeMessages decodes a run of records with a few allocations per
// pull besides each record's own (one string for its strings, its
// properties map): the
// MessageExt values share one array, and a record whose topic is the
// previous one's shares its string. A consumer keeps a pull's messages
// together (its process queue), so one message held keeps the array alive
// as its body keeps the pull body.
func decodeMessages(b []byte, inflate bool) ([]*MessageExt, error) {
	n := 0
	for rest := b; len(rest) > 0; n++ {
		size, err := StoredRecordSize(rest)
		if err != nil {
			break // reported by the decode below
		}
		rest = rest[size:]
	}
	exts := make([]MessageExt, n)
	out := make([]*MessageExt, 0, n)
	var d recordDecoder
	for len(b) > 0 {
		var m *MessageExt
		if len(out) < n {
			m = &exts[len(out)]
		} else {
			m = new(MessageExt)
		}
		size, err := d.decode(m, b, inflate)
		if err != nil {
			return out, fmt.Errorf("message %d: %w", len(out), err)
		}
		out = append(out, m)
		b = b[size:]
	}
	return out, nil
}

// DecodeStoredMessage decodes the record at the start of b and returns it
// with its size. The body aliases b unless it was inflated.
func DecodeStoredMessage(b []byte, inflate bool) (*MessageExt, int, error) {
	m := new(MessageExt)
	var d recordDecoder
	size, err := d.decode(m, b, inflate)
	if err != nil {
		return nil, 0, err
	}
	return m, size, nil
}

// recordDecoder decodes records one after another, remembering the last
// topic so that records of one topic share its string.
type recordDecoder struct {
	topic string
	strs  []byte
}

// decode fills m from the record at the start of b and returns its size.
// The record's topic (unless it repeats), properties and offset message id
// are made into one string, of which m's strings are substrings.
func (d *recordDecoder) decode(m *MessageExt, b []byte, inflate bool) (int, error) {
	size, body, topic, props, err := readStored(m, b)
	if err != nil {
		return 0, err
	}
	m.Body = body
	if inflate && m.SysFlag&SysFlagCompressed != 0 {
		if plain, err := Decompress(body, maxInflatedBody); err == nil {
			m.Body = plain
		}
	}
	newTopic := string(topic) != d.topic
	strs := d.strs[:0]
	if newTopic {
		strs = append(strs, topic...)
	}
	strs = append(strs, props...)
	strs = appendOffsetMsgID(strs, m.StoreHost, m.CommitLogOffset)
	all := string(strs)
	d.strs = strs
	if newTopic {
		d.topic, all = all[:len(topic)], all[len(topic):]
	}
	m.Topic = d.topic
	m.Properties = UnmarshalProperties(all[:len(props)])
	m.OffsetMsgID = all[len(props):]
	m.MsgID = m.UniqKey()
	if m.MsgID == "" {
		m.MsgID = m.OffsetMsgID
	}
	return size, nil
}

// readStored checks the record at the start of b (its totalSize, magic,
// host ports, and that its fields end at its totalSize), fills m's fixed
// fields and returns the record's size with its body, topic and raw
// properties, which alias b. Every reader of a whole record starts here, so
// they accept and refuse the same records.
func readStored(m *MessageExt, b []byte) (size int, body, topic, props []byte, err error) {
	size, err = StoredRecordSize(b)
	if err != nil {
		return 0, nil, nil, nil, err
	}
	r := reader{b: b[:size]}
	*m = MessageExt{StoreSize: int32(size)}
	r.skip(4)
	if magic := r.i32(); magic != MagicV1 && r.err == nil {
		return 0, nil, nil, nil, fmt.Errorf("%w: magic %#x", ErrMalformedMessage, uint32(magic))
	}
	m.BodyCRC = r.i32()
	m.QueueID = r.i32()
	m.Flag = r.i32()
	m.QueueOffset = r.i64()
	m.CommitLogOffset = r.i64()
	m.SysFlag = r.i32()
	m.BornTimestamp = r.i64()
	m.BornHost = r.host(m.SysFlag&SysFlagBornHostV6 != 0)
	m.StoreTimestamp = r.i64()
	m.StoreHost = r.host(m.SysFlag&SysFlagStoreHostV6 != 0)
	m.ReconsumeTimes = r.i32()
	m.PreparedTransactionOffset = r.i64()
	body = r.bytes(int(r.i32()))
	topic = r.bytes(int(r.u8()))
	props = r.bytes(int(r.u16()))
	if r.err != nil {
		return 0, nil, nil, nil, r.err
	}
	if r.off != size {
		return 0, nil, nil, nil, fmt.Errorf("%w: fields end at %d, totalSize is %d", ErrMalformedMessage, r.off, size)
	}
	return size, body, topic, props, nil
}

// maxInflatedBody bounds zlib output so a small hostile body cannot
// allocate without limit.
const maxInflatedBody = 64 << 20

// reader reads big-endian fields; the first short read sets err and every
// later read returns zero values.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.err = fmt.Errorf("%w: field of %d bytes at %d overruns record of %d", ErrMalformedMessage, n, r.off, len(r.b))
		return nil
	}
	p := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return p
}

func (r *reader) skip(n int) { r.take(n) }

func (r *reader) u8() uint8 {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if p := r.take(2); p != nil {
		return binary.BigEndian.Uint16(p)
	}
	return 0
}

func (r *reader) i32() int32 {
	if p := r.take(4); p != nil {
		return int32(binary.BigEndian.Uint32(p))
	}
	return 0
}

func (r *reader) i64() int64 {
	if p := r.take(8); p != nil {
		return int64(binary.BigEndian.Uint64(p))
	}
	return 0
}

func (r *reader) bytes(n int) []byte { return r.take(n) }

func (r *reader) host(v6 bool) netip.AddrPort {
	var a netip.Addr
	if v6 {
		if p := r.take(16); p != nil {
			a = netip.AddrFrom16([16]byte(p))
		}
	} else if p := r.take(4); p != nil {
		a = netip.AddrFrom4([4]byte(p))
	}
	port := r.i32()
	if r.err == nil && (port < 0 || port > 65535) {
		r.err = fmt.Errorf("%w: port %d", ErrMalformedMessage, port)
	}
	return netip.AddrPortFrom(a, uint16(port))
}
