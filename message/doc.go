// Package message owns RocketMQ's message and its stored record: Message
// and MessageExt, their properties and sysFlag bits, the record's codec,
// offsetMsgId and UNIQ_KEY ids, body compression and the tag hash code.
//
// The stored record is one format with two homes: it is the value of every
// commit log key (store/commitlog) and, records laid end to end, the body
// of a PULL answer (remoting/protocol). So it is coded here, below both:
// this package imports nothing of the module, and the store reads and
// writes records without importing the wire (internal/lint keeps both
// true). remoting/protocol names the types and constants under their wire
// names (protocol.MessageExt is MessageExt).
//
// Record layout (magic V1, all integers big-endian):
//
//	offset  size  field
//	     0     4  totalSize             the record's own length
//	     4     4  magic                 0xDAA320A7 (MagicV1)
//	     8     4  bodyCRC               CRC-32 IEEE of body, masked to 31 bits
//	    12     4  queueId
//	    16     4  flag                  the producer's flag
//	    20     8  queueOffset           position in the consume queue
//	    28     8  physicalOffset        position in the commit log
//	    36     4  sysFlag               SysFlag* bits
//	    40     8  bornTimestamp         ms
//	    48   4+4  bornHost              IPv4 + port (16+4 if SysFlagBornHostV6)
//	     .     8  storeTimestamp        ms (StoreTimestampPos)
//	     .   4+4  storeHost             IPv4 + port (16+4 if SysFlagStoreHostV6)
//	     .     4  reconsumeTimes
//	     .     8  preparedTransactionOffset
//	     .     4  bodyLength, then body (zlib if SysFlagCompressed)
//	     .     1  topicLength, then topic (at most 255 bytes)
//	     .     2  propertiesLength, then properties:
//	              name 0x01 value 0x02 ..., names sorted (at most 32767 bytes)
//
// 91 bytes plus body, topic and properties for IPv4 hosts (StoredSize).
// The Go client reads a 1-byte topic length whatever the magic says, so V2
// (a 2-byte topic length) is never written.
//
// Invariants: an encoder given equal messages writes equal bytes (sorted
// properties), which replicas of the store rely on; the decoders never
// panic and check every length against the bytes present, so a hostile
// PULL body or a torn log record is an ErrMalformedMessage, and a small
// zlib body cannot inflate beyond a fixed bound.
package message
