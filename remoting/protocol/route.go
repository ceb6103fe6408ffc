package protocol

import (
	"encoding/json"
	"fmt"
)

// MasterID is the broker id of a master; any other id is a slave.
const MasterID int64 = 0

// QueueData is one broker's share of a topic in a route (RocketMQ QueueData).
type QueueData struct {
	BrokerName     string
	ReadQueueNums  int
	WriteQueueNums int
	Perm           int
	TopicSysFlag   int
}

// queueDataJSON is QueueData's wire form. Java 5 names the flag
// topicSysFlag; Java 4 and the official Go client use the misspelt
// topicSynFlag. Both are written so every client sees the flag, and either
// is read.
type queueDataJSON struct {
	BrokerName     string `json:"brokerName"`
	ReadQueueNums  int    `json:"readQueueNums"`
	WriteQueueNums int    `json:"writeQueueNums"`
	Perm           int    `json:"perm"`
	TopicSysFlag   int    `json:"topicSysFlag"`
	TopicSynFlag   *int   `json:"topicSynFlag,omitempty"`
}

// MarshalJSON writes both spellings of the sys flag.
func (q QueueData) MarshalJSON() ([]byte, error) {
	flag := q.TopicSysFlag
	return json.Marshal(queueDataJSON{
		BrokerName: q.BrokerName, ReadQueueNums: q.ReadQueueNums, WriteQueueNums: q.WriteQueueNums,
		Perm: q.Perm, TopicSysFlag: flag, TopicSynFlag: &flag,
	})
}

// UnmarshalJSON reads either spelling of the sys flag.
func (q *QueueData) UnmarshalJSON(b []byte) error {
	var j queueDataJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*q = QueueData{BrokerName: j.BrokerName, ReadQueueNums: j.ReadQueueNums, WriteQueueNums: j.WriteQueueNums,
		Perm: j.Perm, TopicSysFlag: j.TopicSysFlag}
	if j.TopicSynFlag != nil && j.TopicSysFlag == 0 {
		q.TopicSysFlag = *j.TopicSynFlag
	}
	return nil
}

// BrokerData names the addresses of one broker group: brokerId -> "ip:port",
// id 0 being the master (RocketMQ BrokerData).
type BrokerData struct {
	Cluster     string           `json:"cluster"`
	BrokerName  string           `json:"brokerName"`
	BrokerAddrs map[int64]string `json:"brokerAddrs"`
}

// MarshalJSON always writes brokerAddrs as an object, {} when empty: the
// official Go client slices the raw text of this object and panics on null
// or a missing key.
func (b BrokerData) MarshalJSON() ([]byte, error) {
	type plain BrokerData
	p := plain(b)
	if p.BrokerAddrs == nil {
		p.BrokerAddrs = map[int64]string{}
	}
	return json.Marshal(p)
}

// MasterAddr returns the master's address, or "".
func (b BrokerData) MasterAddr() string { return b.BrokerAddrs[MasterID] }

// Clone returns a deep copy of b.
func (b BrokerData) Clone() BrokerData {
	c := BrokerData{Cluster: b.Cluster, BrokerName: b.BrokerName, BrokerAddrs: make(map[int64]string, len(b.BrokerAddrs))}
	for id, addr := range b.BrokerAddrs {
		c.BrokerAddrs[id] = addr
	}
	return c
}

// TopicRouteData is the body of a successful GET_ROUTEINFO_BY_TOPIC
// (RocketMQ TopicRouteData).
//
// Encoded with MarshalJSON it is compact, with queueDatas, brokerDatas and
// every brokerAddrs present — the official Go client parses brokerAddrs by
// hand and needs exactly that (fact sheet §4.1). Decode it with
// DecodeTopicRouteData, which also accepts what a Java name server sends to
// old clients (integer map keys without quotes).
type TopicRouteData struct {
	OrderTopicConf    string              `json:"orderTopicConf,omitempty"`
	QueueDatas        []QueueData         `json:"queueDatas"`
	BrokerDatas       []BrokerData        `json:"brokerDatas"`
	FilterServerTable map[string][]string `json:"filterServerTable"`
}

// MarshalJSON writes nil slices and maps as [] and {}.
func (r TopicRouteData) MarshalJSON() ([]byte, error) {
	type plain TopicRouteData
	p := plain(r)
	if p.QueueDatas == nil {
		p.QueueDatas = []QueueData{}
	}
	if p.BrokerDatas == nil {
		p.BrokerDatas = []BrokerData{}
	}
	if p.FilterServerTable == nil {
		p.FilterServerTable = map[string][]string{}
	}
	return json.Marshal(p)
}

// Encode returns the compact JSON body.
func (r *TopicRouteData) Encode() ([]byte, error) { return json.Marshal(r) }

// DecodeTopicRouteData decodes a route body in standard JSON or in
// fastjson's form with unquoted integer keys.
func DecodeTopicRouteData(body []byte) (*TopicRouteData, error) {
	r := new(TopicRouteData)
	if err := UnmarshalLenient(body, r); err != nil {
		return nil, fmt.Errorf("protocol: topic route: %w", err)
	}
	return r, nil
}

// UnmarshalLenient is json.Unmarshal that also accepts object keys written
// as bare integers, as Java's fastjson writes Map<Long, ...> keys
// ({0:"127.0.0.1:10911"}). Standard JSON takes the fast path; only input
// that fails to parse is rewritten and tried again.
func UnmarshalLenient(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	fixed, changed := quoteNumericKeys(data)
	if !changed {
		return err
	}
	return json.Unmarshal(fixed, v)
}

// quoteNumericKeys puts quotes around object keys that are bare integers.
// A key is a token right after '{' or ',' (outside strings) that is
// followed by ':'; tokens in arrays are followed by ',' or ']' and are left
// alone. It reports whether anything changed.
func quoteNumericKeys(data []byte) ([]byte, bool) {
	var out []byte
	last := 0 // data[last:] is not yet copied to out
	inString, escaped := false, false
	expectKey := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			expectKey = false
		case '{', ',':
			expectKey = true
		case ' ', '\t', '\r', '\n':
		default:
			if expectKey && (c == '-' || (c >= '0' && c <= '9')) {
				j := i + 1
				for j < len(data) && data[j] >= '0' && data[j] <= '9' {
					j++
				}
				k := j
				for k < len(data) && (data[k] == ' ' || data[k] == '\t' || data[k] == '\r' || data[k] == '\n') {
					k++
				}
				if k < len(data) && data[k] == ':' {
					if out == nil {
						out = make([]byte, 0, len(data)+16)
					}
					out = append(out, data[last:i]...)
					out = append(out, '"')
					out = append(out, data[i:j]...)
					out = append(out, '"')
					last = j
				}
				i = j - 1
			}
			expectKey = false
		}
	}
	if out == nil {
		return data, false
	}
	return append(out, data[last:]...), true
}

// GetRouteInfoRequestHeader is the ext of GET_ROUTEINFO_BY_TOPIC.
// AcceptStandardJSONOnly asks a Java name server for quoted map keys.
type GetRouteInfoRequestHeader struct {
	Topic                  string
	AcceptStandardJSONOnly bool
}

// Decode reads the header from ext; topic is required.
func (h *GetRouteInfoRequestHeader) Decode(ext map[string]string) error {
	d := newExtDecoder("GET_ROUTEINFO_BY_TOPIC", ext)
	h.Topic = d.str("topic", true)
	h.AcceptStandardJSONOnly = d.bool("acceptStandardJsonOnly", false)
	return d.err
}

// Encode returns the header as extFields.
func (h GetRouteInfoRequestHeader) Encode() map[string]string {
	e := extEncoder{"topic": h.Topic}
	if h.AcceptStandardJSONOnly {
		e.bool("acceptStandardJsonOnly", true)
	}
	return e
}
