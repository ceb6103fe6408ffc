package grpcdoor

import (
	"context"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"

	"github.com/runnelmq/runnel/topicconf"
)

// QueryRoute answers a topic's queues on this broker, as the proxy in
// local mode does: every queue with its permission and the message types
// the topic accepts, at the door's advertised endpoint (a follower's
// routes name its leader's door, where writes go). A topic that does not
// exist is made on first use when auto-creation is on, as MIXED, so a
// client can send every kind of message to it.
func (d *Door) QueryRoute(ctx context.Context, req *v2.QueryRouteRequest) (*v2.QueryRouteResponse, error) {
	c, err := d.begin(ctx)
	if err == nil {
		err = checkTopic(c.name(req.GetTopic()))
	}
	if err == nil {
		err = d.authorize(c, access{Topic: c.name(req.GetTopic()), Action: actionGet})
	}
	if err != nil {
		return &v2.QueryRouteResponse{Status: statusOf(err)}, nil
	}
	tc, err := d.topicForClient(c, c.name(req.GetTopic()))
	if err != nil {
		return &v2.QueryRouteResponse{Status: statusOf(err)}, nil
	}
	broker := d.routeBroker()
	accept := acceptTypes(tc.MessageType())
	return &v2.QueryRouteResponse{Status: okStatus(), MessageQueues: routeQueues(req.GetTopic(), tc, broker, accept)}, nil
}

// routeBroker is the broker routes name: this one, at its door or, on a
// follower that knows it, at its leader's.
func (d *Door) routeBroker() *v2.Broker {
	ep := d.endpoints()
	if !d.core.IsMaster() && d.cfg.Leader != nil {
		if addr := d.cfg.Leader(); addr != "" {
			ep = endpointsOf(addr)
		}
	}
	return &v2.Broker{Name: d.cfg.BrokerName, Id: 0, Endpoints: ep}
}

// routeQueues lists a topic's queues as the proxy does
// (RouteActivity.genMessageQueueFromQueueData): read-only queues first,
// then write-only, then read-write, numbered from 0.
func routeQueues(topic *v2.Resource, tc topicconf.Config, broker *v2.Broker, accept []v2.MessageType) []*v2.MessageQueue {
	var r, w, rw, n int
	readable, writable := topicconf.IsReadable(tc.Perm), topicconf.IsWriteable(tc.Perm)
	switch {
	case readable && writable:
		rw = min(tc.WriteQueueNums, tc.ReadQueueNums)
		r, w = tc.ReadQueueNums-rw, tc.WriteQueueNums-rw
	case writable:
		w = tc.WriteQueueNums
	case readable:
		r = tc.ReadQueueNums
	default:
		n = max(1, tc.WriteQueueNums, tc.ReadQueueNums)
	}
	var out []*v2.MessageQueue
	id := int32(0)
	add := func(count int, p v2.Permission) {
		for range count {
			out = append(out, &v2.MessageQueue{Topic: topic, Id: id, Permission: p, Broker: broker, AcceptMessageTypes: accept})
			id++
		}
	}
	add(r, v2.Permission_READ)
	add(w, v2.Permission_WRITE)
	add(rw, v2.Permission_READ_WRITE)
	add(n, v2.Permission_NONE)
	return out
}

// permissionOf is a topic's perm as a queue's Permission.
func permissionOf(perm int) v2.Permission {
	switch r, w := topicconf.IsReadable(perm), topicconf.IsWriteable(perm); {
	case r && w:
		return v2.Permission_READ_WRITE
	case r:
		return v2.Permission_READ
	case w:
		return v2.Permission_WRITE
	}
	return v2.Permission_NONE
}

// QueryAssignment answers which queues a push consumer receives from: for
// a FIFO group each readable queue (one in-flight batch per queue keeps a
// message group's order), else one assignment of queue -1, any queue, as
// the proxy does.
func (d *Door) QueryAssignment(ctx context.Context, req *v2.QueryAssignmentRequest) (*v2.QueryAssignmentResponse, error) {
	c, err := d.begin(ctx)
	if err == nil {
		err = checkTopic(c.name(req.GetTopic()))
	}
	if err == nil {
		err = checkGroup(c.name(req.GetGroup()))
	}
	if err == nil {
		err = d.authorize(c, access{Topic: c.name(req.GetTopic()), Group: c.name(req.GetGroup()), Action: actionSub})
	}
	if err != nil {
		return &v2.QueryAssignmentResponse{Status: statusOf(err)}, nil
	}
	tc, err := d.topicForClient(c, c.name(req.GetTopic()))
	if err != nil {
		return &v2.QueryAssignmentResponse{Status: statusOf(err)}, nil
	}
	if !topicconf.IsReadable(tc.Perm) || tc.ReadQueueNums <= 0 {
		return &v2.QueryAssignmentResponse{Status: status(v2.Code_FORBIDDEN, "no readable queue")}, nil
	}
	broker := d.routeBroker()
	perm := permissionOf(tc.Perm)
	var out []*v2.Assignment
	if groupFIFO(d.group(c.name(req.GetGroup()))) {
		for i := range tc.ReadQueueNums {
			out = append(out, &v2.Assignment{MessageQueue: &v2.MessageQueue{Topic: req.GetTopic(), Id: int32(i), Permission: perm, Broker: broker}})
		}
	} else {
		out = append(out, &v2.Assignment{MessageQueue: &v2.MessageQueue{Topic: req.GetTopic(), Id: -1, Permission: perm, Broker: broker}})
	}
	return &v2.QueryAssignmentResponse{Status: okStatus(), Assignments: out}, nil
}
