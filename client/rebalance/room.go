package rebalance

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/runnelmq/runnel/client/queue"
)

// ByMachineRoom serves only the queues of brokers named "<room>@<name>" whose
// room is in ConsumerIDCs, and splits those among all clients: each client
// takes len/len(cidAll) consecutive queues, and the first len%len(cidAll)
// clients one more from the tail, dealt in client order. Queues of other
// brokers are allocated to nobody. Java's AllocateMessageQueueByMachineRoom
// ("MACHINE_ROOM").
//
// The official Go client's AllocateByMachineRoom indexes the consecutive
// runs into the unfiltered queue list; the two agree only when the served
// queues are the first ones in canonical order. This follows Java.
type ByMachineRoom struct {
	// ConsumerIDCs are the machine rooms whose queues this group consumes.
	// Required: an empty list is an error.
	ConsumerIDCs []string
}

// Name implements Strategy.
func (ByMachineRoom) Name() string { return "MACHINE_ROOM" }

// Allocate implements Strategy.
func (s ByMachineRoom) Allocate(_, currentCID string, mqAll []queue.MessageQueue, cidAll []string) ([]queue.MessageQueue, error) {
	if len(s.ConsumerIDCs) == 0 {
		return []queue.MessageQueue{}, fmt.Errorf("%w: ByMachineRoom.ConsumerIDCs is empty", ErrBadConfig)
	}
	return member(currentCID, mqAll, cidAll, func(index int) []queue.MessageQueue {
		var served []queue.MessageQueue
		for _, mq := range mqAll {
			if parts := javaSplit(mq.BrokerName, "@"); len(parts) == 2 && slices.Contains(s.ConsumerIDCs, parts[0]) {
				served = append(served, mq)
			}
		}
		per := len(served) / len(cidAll)
		rem := len(served) % len(cidAll)
		out := slices.Clone(served[per*index : per*index+per])
		if out == nil {
			out = []queue.MessageQueue{}
		}
		if index < rem {
			out = append(out, served[index+per*len(cidAll)])
		}
		return out
	})
}

// javaSplit is Java's String.split for a literal separator: trailing empty
// parts are dropped, so "a@b@" has two parts and "a@" one.
func javaSplit(s, sep string) []string {
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// RoomResolver tells which machine room a broker's queue and a client are
// deployed in. Both must return a non-empty room.
type RoomResolver interface {
	BrokerRoom(mq queue.MessageQueue) string
	ClientRoom(clientID string) string
}

// ErrNoRoom means a RoomResolver returned an empty room; the wrapping error
// names the queue or client.
var ErrNoRoom = errors.New("rebalance: machine room unknown")

// MachineRoomNearby prefers locality: the queues of a machine room that has
// at least one live client are split, by Inner, among that room's clients
// only; the queues of a room without clients are split, by Inner, among all
// clients. Java's AllocateMachineRoomNearby ("MACHINE_ROOM_NEARBY-<inner>").
// The official Go client's AllocateByMachineNearby ignores rooms and is plain
// Averagely.
type MachineRoomNearby struct {
	// Inner splits each group of queues. Default (nil): Averagely.
	Inner Strategy
	// Resolver places queues and clients in rooms. Required.
	Resolver RoomResolver
}

// Name implements Strategy.
func (s MachineRoomNearby) Name() string { return "MACHINE_ROOM_NEARBY-" + s.inner().Name() }

func (s MachineRoomNearby) inner() Strategy {
	if s.Inner == nil {
		return Averagely{}
	}
	return s.Inner
}

// Allocate implements Strategy.
func (s MachineRoomNearby) Allocate(group, currentCID string, mqAll []queue.MessageQueue, cidAll []string) ([]queue.MessageQueue, error) {
	if s.Resolver == nil {
		return []queue.MessageQueue{}, fmt.Errorf("%w: MachineRoomNearby.Resolver is nil", ErrBadConfig)
	}
	index, err := check(currentCID, mqAll, cidAll)
	if err != nil || index < 0 {
		return []queue.MessageQueue{}, err
	}
	// Rooms are visited in sorted order (Java uses a TreeMap), and each
	// room's queues and clients keep their input order, so Inner sees
	// canonically ordered lists.
	mqByRoom := map[string][]queue.MessageQueue{}
	for _, mq := range mqAll {
		room := s.Resolver.BrokerRoom(mq)
		if room == "" {
			return []queue.MessageQueue{}, fmt.Errorf("%w: for queue %v", ErrNoRoom, mq)
		}
		mqByRoom[room] = append(mqByRoom[room], mq)
	}
	cidByRoom := map[string][]string{}
	for _, cid := range cidAll {
		room := s.Resolver.ClientRoom(cid)
		if room == "" {
			return []queue.MessageQueue{}, fmt.Errorf("%w: for client %q", ErrNoRoom, cid)
		}
		cidByRoom[room] = append(cidByRoom[room], cid)
	}
	inner := s.inner()
	out := []queue.MessageQueue{}
	myRoom := s.Resolver.ClientRoom(currentCID)
	if mqs := mqByRoom[myRoom]; len(mqs) > 0 {
		got, err := inner.Allocate(group, currentCID, mqs, cidByRoom[myRoom])
		if err != nil {
			return []queue.MessageQueue{}, err
		}
		out = append(out, got...)
	}
	rooms := make([]string, 0, len(mqByRoom))
	for room := range mqByRoom {
		rooms = append(rooms, room)
	}
	slices.Sort(rooms)
	for _, room := range rooms {
		if room == myRoom || len(cidByRoom[room]) > 0 {
			continue
		}
		got, err := inner.Allocate(group, currentCID, mqByRoom[room], cidAll)
		if err != nil {
			return []queue.MessageQueue{}, err
		}
		out = append(out, got...)
	}
	return out, nil
}
