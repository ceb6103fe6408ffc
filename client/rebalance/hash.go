package rebalance

import (
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"

	"github.com/runnelmq/runnel/client/queue"
)

// Ring selects how ConsistentHash builds its hash ring. Java and the official
// Go client build different rings from the same client ids, so a consumer
// group mixing clients must use the ring of the clients it shares with.
type Ring int

const (
	// RingJava is Java's ConsistentHashRouter with its default hash: virtual
	// node "<cid>-<i>" hashed by the first four bytes of its MD5 digest read
	// big-endian; a queue goes to the first virtual node whose hash is >= the
	// hash of queue.String().
	RingJava Ring = iota
	// RingGoClient is the ring of the official Go client
	// (stathat.com/c/consistent): virtual node "<i><cid>" hashed by CRC-32
	// (IEEE); a queue goes to the first virtual node whose hash is > the
	// hash of queue.String(); on a hash collision the later client id wins.
	RingGoClient
)

// DefaultVirtualNodes is Java's default number of virtual nodes per client.
const DefaultVirtualNodes = 10

// ConsistentHash places every client on a hash ring VirtualNodes times and
// gives each queue to the client owning the first ring point at or after the
// queue's hash, so a client joining or leaving moves only the queues next to
// its points. Java's AllocateMessageQueueConsistentHash ("CONSISTENT_HASH")
// with Ring RingJava, the official Go client's AllocateByConsistentHash with
// RingGoClient.
type ConsistentHash struct {
	// VirtualNodes is the number of ring points per client. Default (0):
	// DefaultVirtualNodes. Negative values are an error.
	VirtualNodes int
	// Ring selects the hash ring. Default: RingJava.
	Ring Ring
}

// Name implements Strategy.
func (ConsistentHash) Name() string { return "CONSISTENT_HASH" }

// Allocate implements Strategy.
func (c ConsistentHash) Allocate(_, currentCID string, mqAll []queue.MessageQueue, cidAll []string) ([]queue.MessageQueue, error) {
	vnodes := c.VirtualNodes
	if vnodes == 0 {
		vnodes = DefaultVirtualNodes
	}
	if vnodes < 0 {
		return []queue.MessageQueue{}, fmt.Errorf("%w: ConsistentHash.VirtualNodes is %d, want >= 0", ErrBadConfig, c.VirtualNodes)
	}
	if c.Ring != RingJava && c.Ring != RingGoClient {
		return []queue.MessageQueue{}, fmt.Errorf("%w: ConsistentHash.Ring is %d, want RingJava or RingGoClient", ErrBadConfig, c.Ring)
	}
	return member(currentCID, mqAll, cidAll, func(int) []queue.MessageQueue {
		r := buildRing(c.Ring, vnodes, cidAll)
		out := []queue.MessageQueue{}
		for _, mq := range mqAll {
			if r.route(mq.String()) == currentCID {
				out = append(out, mq)
			}
		}
		return out
	})
}

// hashRing is a sorted list of ring points and the client owning each.
type hashRing struct {
	kind   Ring
	points []uint32
	owner  map[uint32]string
}

func buildRing(kind Ring, vnodes int, cidAll []string) hashRing {
	r := hashRing{kind: kind, owner: make(map[uint32]string, vnodes*len(cidAll))}
	for _, cid := range cidAll {
		// Java numbers a client's virtual nodes after those it already has
		// on the ring, which only matters if cidAll repeats an id.
		existing := 0
		if kind == RingJava {
			for _, o := range r.owner {
				if o == cid {
					existing++
				}
			}
		}
		for i := range vnodes {
			// Both implementations overwrite on a collision, so the client
			// added later owns the point.
			r.owner[r.vnodeHash(cid, existing+i)] = cid
		}
	}
	r.points = make([]uint32, 0, len(r.owner))
	for p := range r.owner {
		r.points = append(r.points, p)
	}
	slices.Sort(r.points)
	return r
}

func (r hashRing) vnodeHash(cid string, i int) uint32 {
	if r.kind == RingJava {
		return md5Hash(cid + "-" + strconv.Itoa(i))
	}
	return crc32.ChecksumIEEE([]byte(strconv.Itoa(i) + cid))
}

// route returns the client owning key, or "" on an empty ring.
func (r hashRing) route(key string) string {
	if len(r.points) == 0 {
		return ""
	}
	var i int
	if r.kind == RingJava {
		h := md5Hash(key)
		i, _ = slices.BinarySearch(r.points, h) // first point >= h
	} else {
		h := crc32.ChecksumIEEE([]byte(key))
		i, _ = slices.BinarySearch(r.points, h)
		if i < len(r.points) && r.points[i] == h {
			i++ // first point > h
		}
	}
	if i == len(r.points) {
		i = 0
	}
	return r.owner[r.points[i]]
}

// md5Hash is Java's ConsistentHashRouter.MD5Hash: the first four digest
// bytes as an unsigned big-endian number.
func md5Hash(key string) uint32 {
	sum := md5.Sum([]byte(key))
	return binary.BigEndian.Uint32(sum[:4])
}
