// Package topicconf owns the one type of a topic's configuration
// (RocketMQ's TopicConfig): the broker's topic table holds it, the store
// persists it (store/meta keys and encodes it), and REGISTER_BROKER and
// GET_TOPIC_CONFIG bodies carry it (remoting/protocol names it
// TopicConfig). It imports nothing of the module, so the store need not
// import the wire to keep a topic, nor the wire the store to send one.
//
// The JSON field names are RocketMQ's, which both the wire and the stored
// record use. It also owns the alphabet of topic and group names
// (ValidName), which the client, its admin API and the broker check alike.
package topicconf

// Permission bits of a topic or queue (RocketMQ PermName). Normal topics use
// PermRead|PermWrite (6); the auto-create template TBW102 adds PermInherit (7).
const (
	PermPriority = 8
	PermRead     = 4
	PermWrite    = 2
	PermInherit  = 1
)

// Topic filter types (RocketMQ TopicFilterType).
const (
	FilterSingleTag = "SINGLE_TAG"
	FilterMultiTag  = "MULTI_TAG"
)

// Config is one topic's configuration (RocketMQ TopicConfig).
type Config struct {
	TopicName       string `json:"topicName"`
	ReadQueueNums   int    `json:"readQueueNums"`
	WriteQueueNums  int    `json:"writeQueueNums"`
	Perm            int    `json:"perm"` // Perm* bits
	TopicFilterType string `json:"topicFilterType,omitempty"`
	TopicSysFlag    int    `json:"topicSysFlag"`
	Order           bool   `json:"order"`
	// Attributes are RocketMQ 5's topic attributes: message.type
	// (msgtype.go) is the one a broker keeps; they travel on the wire and
	// are persisted.
	Attributes map[string]string `json:"attributes,omitempty"`
}

// New returns the default configuration RocketMQ gives a topic: 16 read
// and write queues, perm RW, single-tag filtering.
func New(name string) Config {
	return Config{
		TopicName:       name,
		ReadQueueNums:   16,
		WriteQueueNums:  16,
		Perm:            PermRead | PermWrite,
		TopicFilterType: FilterSingleTag,
	}
}
