package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
)

// DefaultBrokerHeartbeatTimeoutMillis is how long a name server keeps a
// broker that has gone silent, unless the broker asks otherwise.
const DefaultBrokerHeartbeatTimeoutMillis = 120_000

// RegisterBrokerRequestHeader is the ext of REGISTER_BROKER.
type RegisterBrokerRequestHeader struct {
	BrokerName   string
	BrokerAddr   string // ip:port clients connect to
	ClusterName  string
	HAServerAddr string
	BrokerID     int64 // 0 = master
	// HeartbeatTimeoutMillis is the broker's own expiry; 0 = the name
	// server's default.
	HeartbeatTimeoutMillis int64
	EnableActingMaster     bool
	Compressed             bool
	// BodyCRC32 is Java's UtilAll.crc32 of the body (IEEE CRC-32 with the
	// top bit cleared); 0 = not checked.
	BodyCRC32 int32
}

// Decode reads the header from ext. brokerName, brokerAddr, clusterName and
// brokerId are required; haServerAddr, which Java also marks required, may
// be missing, since a broker without replication has none.
func (h *RegisterBrokerRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("REGISTER_BROKER", ext)
	h.BrokerName = d.str("brokerName", true)
	h.BrokerAddr = d.str("brokerAddr", true)
	h.ClusterName = d.str("clusterName", true)
	h.HAServerAddr = d.str("haServerAddr", false)
	h.BrokerID = d.int64("brokerId", true, 0)
	h.HeartbeatTimeoutMillis = d.int64("heartbeatTimeoutMillis", false, 0)
	h.EnableActingMaster = d.bool("enableActingMaster", false)
	h.Compressed = d.bool("compressed", false)
	h.BodyCRC32 = d.int32("bodyCrc32", false, 0)
	return d.err
}

// Encode returns the header as extFields.
func (h RegisterBrokerRequestHeader) Encode() map[string]string {
	e := extEncoder{}
	e.str("brokerName", h.BrokerName)
	e.str("brokerAddr", h.BrokerAddr)
	e.str("clusterName", h.ClusterName)
	e.str("haServerAddr", h.HAServerAddr)
	e.int64("brokerId", h.BrokerID)
	if h.HeartbeatTimeoutMillis > 0 {
		e.int64("heartbeatTimeoutMillis", h.HeartbeatTimeoutMillis)
	}
	e.bool("enableActingMaster", h.EnableActingMaster)
	e.bool("compressed", h.Compressed)
	e.int32("bodyCrc32", h.BodyCRC32)
	return e
}

// BodyCRC32 computes the checksum Java puts in bodyCrc32 for body.
func BodyCRC32(body []byte) int32 { return int32(crc32.ChecksumIEEE(body) & 0x7FFFFFFF) }

// RegisterBrokerResponseHeader is the ext of a REGISTER_BROKER response: for
// a slave, where its master is.
type RegisterBrokerResponseHeader struct {
	HAServerAddr string
	MasterAddr   string
}

// Decode reads the header from ext; both fields are optional.
func (h *RegisterBrokerResponseHeader) Decode(ext map[string]string) error {
	h.HAServerAddr = ext["haServerAddr"]
	h.MasterAddr = ext["masterAddr"]
	return nil
}

// Encode returns the header as extFields, leaving out empty fields as Java
// leaves out nulls.
func (h RegisterBrokerResponseHeader) Encode() map[string]string {
	e := extEncoder{}
	e.optStr("haServerAddr", h.HAServerAddr)
	e.optStr("masterAddr", h.MasterAddr)
	return e
}

// brokerIdentity is the ext shared by UNREGISTER_BROKER and
// QUERY_DATA_VERSION: which broker is asking; all four fields are required.
type brokerIdentity struct {
	BrokerName  string
	BrokerAddr  string
	ClusterName string
	BrokerID    int64
}

func (h *brokerIdentity) decode(name string, ext map[string]string) error {
	d := newExtDecoder(name, ext)
	h.BrokerName = d.str("brokerName", true)
	h.BrokerAddr = d.str("brokerAddr", true)
	h.ClusterName = d.str("clusterName", true)
	h.BrokerID = d.int64("brokerId", true, 0)
	return d.err
}

func (h brokerIdentity) encode() map[string]string {
	e := extEncoder{}
	e.str("brokerName", h.BrokerName)
	e.str("brokerAddr", h.BrokerAddr)
	e.str("clusterName", h.ClusterName)
	e.int64("brokerId", h.BrokerID)
	return e
}

// UnregisterBrokerRequestHeader is the ext of UNREGISTER_BROKER.
type UnregisterBrokerRequestHeader brokerIdentity

// Decode reads the header from ext; all four fields are required.
func (h *UnregisterBrokerRequestHeader) Decode(ext map[string]string) error {
	return (*brokerIdentity)(h).decode("UNREGISTER_BROKER", ext)
}

// Encode returns the header as extFields.
func (h UnregisterBrokerRequestHeader) Encode() map[string]string { return brokerIdentity(h).encode() }

// BrokerHeartbeatRequestHeader is the ext of BROKER_HEARTBEAT (904), the
// keep-alive Java 5 brokers send between registrations. Only the fields the
// name server needs to find the broker are kept.
type BrokerHeartbeatRequestHeader struct {
	ClusterName string
	BrokerAddr  string
	BrokerName  string
	BrokerID    int64 // optional; -1 when absent
}

// Decode reads the header from ext; clusterName and brokerAddr are required.
func (h *BrokerHeartbeatRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("BROKER_HEARTBEAT", ext)
	h.ClusterName = d.str("clusterName", true)
	h.BrokerAddr = d.str("brokerAddr", true)
	h.BrokerName = d.str("brokerName", false)
	h.BrokerID = d.int64("brokerId", false, -1)
	return d.err
}

// Encode returns the header as extFields.
func (h BrokerHeartbeatRequestHeader) Encode() map[string]string {
	e := extEncoder{}
	e.str("clusterName", h.ClusterName)
	e.str("brokerAddr", h.BrokerAddr)
	e.optStr("brokerName", h.BrokerName)
	if h.BrokerID >= 0 {
		e.int64("brokerId", h.BrokerID)
	}
	return e
}

// RegisterBrokerBody is the body of REGISTER_BROKER from brokers of
// RocketMQ 3.0.11 on (RocketMQ RegisterBrokerBody). Older brokers send the
// bare TopicConfigSerializeWrapper; DecodeRegisterBrokerBody accepts both.
type RegisterBrokerBody struct {
	TopicConfigSerializeWrapper TopicConfigSerializeWrapper `json:"topicConfigSerializeWrapper"`
	FilterServerList            []string                    `json:"filterServerList"`
}

// Encode returns the compact JSON body.
func (b *RegisterBrokerBody) Encode() ([]byte, error) {
	p := *b
	if p.FilterServerList == nil {
		p.FilterServerList = []string{}
	}
	return json.Marshal(p)
}

// DecodeRegisterBrokerBody decodes a REGISTER_BROKER body: JSON, or, with
// compressed (the header's compressed field), the zlib form of
// register_compressed.go. An empty body yields an empty table at version
// zero, as in Java.
func DecodeRegisterBrokerBody(body []byte, compressed bool) (*RegisterBrokerBody, error) {
	b := new(RegisterBrokerBody)
	if len(bytes.TrimSpace(body)) == 0 {
		b.TopicConfigSerializeWrapper.TopicConfigTable = map[string]TopicConfig{}
		return b, nil
	}
	if compressed {
		return decodeCompressedRegisterBody(body)
	}
	// Peek at the keys to tell the wrapped form from the bare one.
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil {
		return nil, fmt.Errorf("protocol: register broker body: %w", err)
	}
	if _, wrapped := keys["topicConfigSerializeWrapper"]; wrapped {
		if err := json.Unmarshal(body, b); err != nil {
			return nil, fmt.Errorf("protocol: register broker body: %w", err)
		}
	} else if err := json.Unmarshal(body, &b.TopicConfigSerializeWrapper); err != nil {
		return nil, fmt.Errorf("protocol: register broker body: %w", err)
	}
	if b.TopicConfigSerializeWrapper.TopicConfigTable == nil {
		b.TopicConfigSerializeWrapper.TopicConfigTable = map[string]TopicConfig{}
	}
	// Java keys the table by name; the name inside wins, but fill it in
	// when a broker leaves it out.
	for name, tc := range b.TopicConfigSerializeWrapper.TopicConfigTable {
		if tc.TopicName == "" {
			tc.TopicName = name
			b.TopicConfigSerializeWrapper.TopicConfigTable[name] = tc
		}
	}
	return b, nil
}

// QueryDataVersionRequestHeader is the ext of QUERY_DATA_VERSION, which a
// Java broker sends (with its DataVersion as JSON body) to ask whether it
// needs to register again.
type QueryDataVersionRequestHeader brokerIdentity

// Decode reads the header from ext; all four fields are required.
func (h *QueryDataVersionRequestHeader) Decode(ext map[string]string) error {
	return (*brokerIdentity)(h).decode("QUERY_DATA_VERSION", ext)
}

// Encode returns the header as extFields.
func (h QueryDataVersionRequestHeader) Encode() map[string]string { return brokerIdentity(h).encode() }

// QueryDataVersionResponseHeader is the ext of a QUERY_DATA_VERSION
// response: whether the name server's copy differs from the broker's.
type QueryDataVersionResponseHeader struct {
	Changed bool
}

// Decode reads the header from ext.
func (h *QueryDataVersionResponseHeader) Decode(ext map[string]string) error {
	h.Changed = parseJavaBool(ext["changed"])
	return nil
}

// Encode returns the header as extFields.
func (h QueryDataVersionResponseHeader) Encode() map[string]string {
	e := extEncoder{}
	e.bool("changed", h.Changed)
	return e
}
