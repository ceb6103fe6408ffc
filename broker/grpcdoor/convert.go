package grpcdoor

import (
	"crypto/md5"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
	"time"
	"unicode"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/runnelmq/runnel/message"
)

// Properties RocketMQ 5 adds that the message package does not name.
const (
	propTraceContext      = "TRACE_CONTEXT"
	propBornHost          = "__BORNHOST"
	propBornTimestamp     = "BORN_TIMESTAMP"
	propJavaShardingKey   = "__SHARDINGKEY"
	propDLQOriginTopic    = "DLQ_ORIGIN_TOPIC"
	propDLQOriginMsgID    = "DLQ_ORIGIN_MESSAGE_ID"
	propTimerDelayMS      = "TIMER_DELAY_MS"
	maxUserProperties     = 128
	maxUserPropertiesSize = 16 * 1024
)

// sendProperties are a v2 message's properties as they are stored
// (SendMessageActivity.buildMessageProperty): the user's, checked, with
// the system properties its fields stand for. producerGroup is the
// topic's, as the proxy names gRPC producers; a delivery time may be at
// most maxDelay past now.
func sendProperties(c caller, m *v2.Message, producerGroup string, now time.Time, maxDelay time.Duration) (map[string]string, error) {
	sp := m.GetSystemProperties()
	user := m.GetUserProperties()
	if len(user) > maxUserProperties {
		return nil, refuse(v2.Code_MESSAGE_PROPERTIES_TOO_LARGE, fmt.Sprintf("too many user properties, max is %d", maxUserProperties))
	}
	props := make(map[string]string, len(user)+8)
	size := 0
	for k, v := range user {
		switch {
		case message.IsSystemProperty(k):
			return nil, refuse(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "property is used by system: "+k)
		case hasControl(k):
			return nil, refuse(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "the key of property cannot contain control character")
		case hasControl(v):
			return nil, refuse(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "the value of property cannot contain control character")
		}
		size += len(k) + len(v)
		props[k] = v
	}
	if tag := sp.GetTag(); tag != "" {
		switch {
		case strings.TrimSpace(tag) == "":
			return nil, refuse(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot be the char sequence of whitespace")
		case strings.Contains(tag, "|"):
			return nil, refuse(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot contain '|'")
		case hasControl(tag):
			return nil, refuse(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot contain control character")
		}
		props[message.PropertyTags] = tag
		size += len(tag)
	}
	for _, k := range sp.GetKeys() {
		if k != "" && (strings.TrimSpace(k) == "" || hasControl(k)) {
			return nil, refuse(v2.Code_ILLEGAL_MESSAGE_KEY, "key cannot be whitespace only or contain control characters")
		}
		size += len(k)
	}
	if keys := sp.GetKeys(); len(keys) > 0 {
		props[message.PropertyKeys] = strings.Join(keys, message.KeySeparator)
	}
	if size > maxUserPropertiesSize {
		return nil, refuse(v2.Code_MESSAGE_PROPERTIES_TOO_LARGE, fmt.Sprintf("the total size of user property is too large, max is %d", maxUserPropertiesSize))
	}
	id := sp.GetMessageId()
	if strings.TrimSpace(id) == "" {
		return nil, refuse(v2.Code_ILLEGAL_MESSAGE_ID, "message id cannot be empty")
	}
	props[message.PropertyUniqClientMessageIDKey] = id
	if sp.GetMessageType() == v2.MessageType_TRANSACTION {
		props[message.PropertyTransactionPrepared] = "true"
		if r := sp.GetOrphanedTransactionRecoveryDuration(); r != nil {
			props[message.PropertyCheckImmunityTimeInSecs] = strconv.FormatInt(int64(r.AsDuration()/time.Second), 10)
		}
	}
	if ts := sp.GetDeliveryTimestamp(); ts != nil {
		at := ts.AsTime()
		if maxDelay > 0 && at.Sub(now) > maxDelay {
			return nil, refuse(v2.Code_ILLEGAL_DELIVERY_TIME, fmt.Sprintf("the max delay time of message is too large, max is %d", maxDelay.Milliseconds()))
		}
		props[message.PropertyTimerDeliverMS] = strconv.FormatInt(at.UnixMilli(), 10)
	}
	props[message.PropertyReconsumeTime] = strconv.Itoa(int(sp.GetDeliveryAttempt()))
	props[message.PropertyProducerGroup] = producerGroup
	if g := sp.GetMessageGroup(); g != "" {
		if strings.TrimSpace(g) == "" || hasControl(g) {
			return nil, refuse(v2.Code_ILLEGAL_MESSAGE_GROUP, "message group cannot be whitespace only or contain control characters")
		}
		if len(g) >= maxMessageGroupSize {
			return nil, refuse(v2.Code_ILLEGAL_MESSAGE_GROUP, fmt.Sprintf("message group exceed the max size %d", maxMessageGroupSize))
		}
		props[message.PropertyShardingKey] = g
	}
	if tc := sp.GetTraceContext(); tc != "" {
		props[propTraceContext] = tc
	}
	born := sp.GetBornHost()
	if strings.TrimSpace(born) == "" {
		born = c.Remote
	}
	if born != "" {
		props[propBornHost] = born
	}
	if bt := sp.GetBornTimestamp(); bt.IsValid() {
		props[propBornTimestamp] = strconv.FormatInt(bt.AsTime().UnixMilli(), 10)
	}
	return props, nil
}

// maxMessageGroupSize is the proxy's maxMessageGroupSize.
const maxMessageGroupSize = 64

// hasControl reports whether s holds an ISO control character.
func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

// checkDigest verifies a body against its digest, when the client sent
// one.
func checkDigest(m *v2.Message) error {
	dg := m.GetSystemProperties().GetBodyDigest()
	if dg == nil || dg.GetChecksum() == "" {
		return nil
	}
	if want, ok := digest(dg.GetType(), m.GetBody()); ok && !strings.EqualFold(want, dg.GetChecksum()) {
		return refuse(v2.Code_MESSAGE_CORRUPTED, fmt.Sprintf("message body digest %s %s does not match the body (%s)", dg.GetType(), dg.GetChecksum(), want))
	}
	return nil
}

// digest is body's checksum of type t, as the SDKs write it (upper-case
// hex).
func digest(t v2.DigestType, body []byte) (string, bool) {
	switch t {
	case v2.DigestType_CRC32:
		return strings.ToUpper(strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 16)), true
	case v2.DigestType_MD5:
		sum := md5.Sum(body)
		return strings.ToUpper(hex.EncodeToString(sum[:])), true
	case v2.DigestType_SHA1:
		sum := sha1.Sum(body)
		return strings.ToUpper(hex.EncodeToString(sum[:])), true
	}
	return "", false
}

// delivery is what a received message carries beyond its stored record.
type delivery struct {
	handle    string
	invisible time.Duration
	attempt   int32 // 0: reconsumeTimes + 1
}

// toV2 is a stored message as a v2 Message (GrpcConverter.buildMessage).
func (d *Door) toV2(c caller, m *message.MessageExt, dl delivery) *v2.Message {
	sp := &v2.SystemProperties{
		Keys:           m.Keys(),
		MessageId:      m.MsgID,
		BodyEncoding:   v2.Encoding_IDENTITY,
		BornTimestamp:  timestamppb.New(time.UnixMilli(m.BornTimestamp)),
		StoreTimestamp: timestamppb.New(time.UnixMilli(m.StoreTimestamp)),
		QueueId:        m.QueueID,
	}
	if sp.MessageId == "" {
		sp.MessageId = m.OffsetMsgID
	}
	if tag, ok := m.Properties[message.PropertyTags]; ok {
		sp.Tag = &tag
	}
	sum := md5.Sum(m.Body)
	sp.BodyDigest = &v2.Digest{Type: v2.DigestType_MD5, Checksum: strings.ToUpper(hex.EncodeToString(sum[:]))}
	if m.SysFlag&message.SysFlagCompressed != 0 {
		sp.BodyEncoding = v2.Encoding_GZIP
	}
	group := m.Property(message.PropertyShardingKey)
	if group == "" {
		group = m.Property(propJavaShardingKey)
	}
	switch {
	case m.Property(message.PropertyTransactionPrepared) == "true":
		sp.MessageType = v2.MessageType_TRANSACTION
	case m.Property(message.PropertyDelayTimeLevel) != "" || m.Property(message.PropertyTimerDeliverMS) != "" ||
		m.Property(message.PropertyTimerDelaySec) != "" || m.Property(propTimerDelayMS) != "":
		sp.MessageType = v2.MessageType_DELAY
	case group != "":
		sp.MessageType = v2.MessageType_FIFO
	default:
		sp.MessageType = v2.MessageType_NORMAL
	}
	if born := m.Property(propBornHost); born != "" {
		sp.BornHost = born
	} else if m.BornHost.IsValid() {
		sp.BornHost = m.BornHost.String()
	}
	if m.StoreHost.IsValid() {
		sp.StoreHost = m.StoreHost.String()
	}
	if ms, err := strconv.ParseInt(m.Property(message.PropertyTimerDeliverMS), 10, 64); err == nil {
		sp.DeliveryTimestamp = timestamppb.New(time.UnixMilli(ms))
	}
	if group != "" {
		sp.MessageGroup = &group
	}
	if dl.handle != "" {
		sp.ReceiptHandle = &dl.handle
		sp.InvisibleDuration = durationpb.New(dl.invisible)
	}
	off := m.QueueOffset
	sp.QueueOffset = &off
	attempt := dl.attempt
	if attempt == 0 {
		attempt = m.ReconsumeTimes + 1
	}
	sp.DeliveryAttempt = &attempt
	if tc := m.Property(propTraceContext); tc != "" {
		sp.TraceContext = &tc
	}
	if t, id := m.Property(propDLQOriginTopic), m.Property(propDLQOriginMsgID); t != "" && id != "" {
		sp.DeadLetterQueue = &v2.DeadLetterQueue{Topic: t, MessageId: id}
	}
	user := make(map[string]string, len(m.Properties))
	for k, v := range m.Properties {
		if !message.IsSystemProperty(k) {
			user[k] = v
		}
	}
	return &v2.Message{Topic: c.resource(m.Topic), UserProperties: user, SystemProperties: sp, Body: m.Body}
}

// checkMessage is a half message as a transaction check shows it: with
// its real topic and without the half queue's bookkeeping.
func (d *Door) checkMessage(m *message.MessageExt) *v2.Message {
	if real := m.Property(message.PropertyRealTopic); real != "" {
		cp := *m
		cp.Topic = real
		m = &cp
	}
	return d.toV2(caller{}, m, delivery{})
}
