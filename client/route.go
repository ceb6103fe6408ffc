package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/runnelmq/runnel/client/queue"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Permission bits of a topic's queues (RocketMQ PermName).
const (
	permWrite = 1 << 1
	permRead  = 1 << 2
)

// topicRoute is one topic's route with the queue lists derived from it.
type topicRoute struct {
	data      *protocol.TopicRouteData // its brokers only, the table's entries once stored
	publish   []queue.MessageQueue     // writable queues of brokers with a master
	subscribe []queue.MessageQueue     // readable queues, canonical order
}

// routeTable holds routes by topic and broker addresses by broker name.
type routeTable struct {
	mu      sync.RWMutex
	topics  map[string]*topicRoute
	brokers map[string]protocol.BrokerData
	nsNext  int // round-robin start over the name servers
}

func (rt *routeTable) init() {
	rt.topics = map[string]*topicRoute{}
	rt.brokers = map[string]protocol.BrokerData{}
}

func (rt *routeTable) get(topic string) *topicRoute {
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	return rt.topics[topic]
}

// put stores topic's route and reports whether it named a broker address
// not known before (which then needs a heartbeat before it is pulled from).
//
// The route's broker entries become the table's own, which say the same:
// the topics of one broker share one entry (its address map and strings).
// Each kept the copy its route decoded, and a client of 10,000 topics held
// 10,000 maps the collector marked at every cycle. Entries are never
// written once stored.
func (rt *routeTable) put(topic string, r *topicRoute) (newAddr bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	newAddr = rt.addBrokersLocked(r.data.BrokerDatas)
	for i, b := range r.data.BrokerDatas {
		r.data.BrokerDatas[i] = rt.brokers[b.BrokerName]
	}
	rt.topics[topic] = r
	return newAddr
}

// addBrokersLocked stores bds as the brokers' entries, keeping an entry
// that says the same, and reports whether one named an address not known
// before.
func (rt *routeTable) addBrokersLocked(bds []protocol.BrokerData) (newAddr bool) {
	for _, b := range bds {
		old, ok := rt.brokers[b.BrokerName]
		for id, addr := range b.BrokerAddrs {
			if old.BrokerAddrs[id] != addr {
				newAddr = true
			}
		}
		if !ok || old.Cluster != b.Cluster || !maps.Equal(old.BrokerAddrs, b.BrokerAddrs) {
			rt.brokers[b.BrokerName] = b.Clone()
		}
	}
	return newAddr
}

// pruneBrokers forgets brokers that no cached route names any more, so
// heartbeats stop going to brokers that left.
func (rt *routeTable) pruneBrokers() {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	live := map[string]bool{}
	for _, r := range rt.topics {
		for _, b := range r.data.BrokerDatas {
			live[b.BrokerName] = true
		}
	}
	for name := range rt.brokers {
		if !live[name] {
			delete(rt.brokers, name)
		}
	}
}

// brokers returns a copy of every known broker.
func (rt *routeTable) allBrokers() []protocol.BrokerData {
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	out := make([]protocol.BrokerData, 0, len(rt.brokers))
	for _, b := range rt.brokers {
		out = append(out, b.Clone())
	}
	return out
}

func (rt *routeTable) masterAddr(broker string) string {
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	return rt.brokers[broker].BrokerAddrs[protocol.MasterID]
}

// buildRoute derives the queue lists; maxQueues > 0 caps the queue counts
// (the TBW102 template route).
func buildRoute(topic string, data *protocol.TopicRouteData, maxQueues int) *topicRoute {
	// Only the brokers are read after this: the queue datas (and any
	// filter servers) become the queue lists.
	r := &topicRoute{data: &protocol.TopicRouteData{BrokerDatas: data.BrokerDatas}}
	masters := map[string]bool{}
	for _, b := range data.BrokerDatas {
		if b.MasterAddr() != "" {
			masters[b.BrokerName] = true
		}
	}
	counts := func(qd protocol.QueueData) (w, rd int) {
		w, rd = max(qd.WriteQueueNums, 0), max(qd.ReadQueueNums, 0)
		if maxQueues > 0 {
			w, rd = min(w, maxQueues), min(rd, maxQueues)
		}
		if qd.Perm&permWrite == 0 || !masters[qd.BrokerName] {
			w = 0
		}
		if qd.Perm&permRead == 0 {
			rd = 0
		}
		return w, rd
	}
	var nw, nr int
	for _, qd := range data.QueueDatas {
		w, rd := counts(qd)
		nw, nr = nw+w, nr+rd
	}
	r.publish = make([]queue.MessageQueue, 0, nw)
	r.subscribe = make([]queue.MessageQueue, 0, nr)
	for _, qd := range data.QueueDatas {
		w, rd := counts(qd)
		for i := range int32(w) {
			r.publish = append(r.publish, queue.MessageQueue{Topic: topic, BrokerName: qd.BrokerName, QueueID: i})
		}
		for i := range int32(rd) {
			r.subscribe = append(r.subscribe, queue.MessageQueue{Topic: topic, BrokerName: qd.BrokerName, QueueID: i})
		}
	}
	queue.Sort(r.publish)
	queue.Sort(r.subscribe)
	// Most topics read and write the same queues: one list then serves
	// both, half the memory a route keeps per topic. Nothing writes a
	// route's lists once built (selectors and strategies get them to
	// read).
	if slices.Equal(r.publish, r.subscribe) {
		r.subscribe = r.publish
	}
	return r
}

// queryRoute asks the name servers, in turn, for topic's route.
func (in *instance) queryRoute(ctx context.Context, topic string) (*protocol.TopicRouteData, error) {
	addrs := in.cfg.NameServerAddrs
	in.routes.mu.Lock()
	start := in.routes.nsNext
	in.routes.mu.Unlock()
	var lastErr error
	for i := range addrs {
		addr := addrs[(start+i)%len(addrs)]
		req := protocol.NewRequest(protocol.ReqGetRouteInfoByTopic, protocol.GetRouteInfoRequestHeader{Topic: topic}.Encode(), nil)
		resp, err := in.invoke(ctx, addr, req)
		if err != nil {
			lastErr = transportError("get route of "+topic, "name server", addr, err)
			if ctx.Err() != nil {
				return nil, lastErr
			}
			in.routes.mu.Lock()
			in.routes.nsNext = (start + i + 1) % len(addrs)
			in.routes.mu.Unlock()
			continue
		}
		if resp.Code != protocol.RespSuccess {
			return nil, brokerError("get route of "+topic, "name server", addr, resp)
		}
		data, err := protocol.DecodeTopicRouteData(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("client: route of %s from name server %s: %w", topic, addr, err)
		}
		return data, nil
	}
	return nil, fmt.Errorf("%w: %w", ErrNameServer, lastErr)
}

// updateRoute fetches and stores topic's route.
func (in *instance) updateRoute(ctx context.Context, topic string) (*topicRoute, error) {
	data, err := in.queryRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	r := buildRoute(topic, data, 0)
	old := in.routes.get(topic)
	if in.routes.put(topic, r) {
		in.triggerHeartbeat()
	}
	if old != nil && !slices.Equal(old.subscribe, r.subscribe) {
		// Queues came or went (a broker joined, left or resized the
		// topic): re-split now rather than at the next period, so that
		// clients with different views do not hold a queue twice for long.
		in.triggerRebalance()
	}
	return r, nil
}

// route returns topic's cached route, fetching it if there is none.
func (in *instance) route(ctx context.Context, topic string) (*topicRoute, error) {
	if r := in.routes.get(topic); r != nil {
		return r, nil
	}
	return in.updateRoute(ctx, topic)
}

// publishRoute returns the route a producer sends topic's messages by. A
// topic no name server knows is sent through the template topic's brokers
// (TBW102), capped at defaultQueues queues, so that brokers with
// auto-creation create it (fact sheet §4.5). The template route is not
// cached under topic: the next refresh finds the real route.
func (in *instance) publishRoute(ctx context.Context, topic, templateTopic string, defaultQueues int) (*topicRoute, error) {
	if r := in.routes.get(topic); r != nil && len(r.publish) > 0 {
		return r, nil
	}
	return in.lookUpPublishRoute(ctx, topic, templateTopic, defaultQueues)
}

// lookUpPublishRoute is publishRoute past its cache: for a caller that
// checked the cache itself, before it had a context to look up with.
func (in *instance) lookUpPublishRoute(ctx context.Context, topic, templateTopic string, defaultQueues int) (*topicRoute, error) {
	r, err := in.updateRoute(ctx, topic)
	if err == nil && len(r.publish) > 0 {
		return r, nil
	}
	if err != nil && !errors.Is(err, ErrTopicNotExist) {
		return nil, err
	}
	data, terr := in.queryRoute(ctx, templateTopic)
	if terr != nil {
		if errors.Is(terr, ErrTopicNotExist) {
			return nil, fmt.Errorf("%w: %s (and no broker offers auto-creation through %s)", ErrTopicNotExist, topic, templateTopic)
		}
		return nil, terr
	}
	tr := buildRoute(topic, data, defaultQueues)
	if len(tr.publish) == 0 {
		return nil, fmt.Errorf("%w: %s has no writable queue", ErrTopicNotExist, topic)
	}
	in.routes.mu.Lock()
	newAddr := in.routes.addBrokersLocked(data.BrokerDatas)
	in.routes.mu.Unlock()
	if newAddr {
		in.triggerHeartbeat()
	}
	return tr, nil
}

// brokerAddr returns the master address of broker, refreshing every known
// route once if it is unknown.
func (in *instance) brokerAddr(ctx context.Context, broker string) (string, error) {
	if a := in.routes.masterAddr(broker); a != "" {
		return a, nil
	}
	return in.lookUpBrokerAddr(ctx, broker)
}

// lookUpBrokerAddr is brokerAddr past its cache, for a caller that checked
// it already.
func (in *instance) lookUpBrokerAddr(ctx context.Context, broker string) (string, error) {
	in.refreshRoutes(ctx)
	if a := in.routes.masterAddr(broker); a != "" {
		return a, nil
	}
	return "", fmt.Errorf("%w: %s", ErrNoBroker, broker)
}
