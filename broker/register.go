package broker

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/runnelmq/runnel/remoting/protocol"
)

// registerTimeout bounds one REGISTER_BROKER or UNREGISTER_BROKER call
// (RocketMQ registerBrokerTimeoutMills: 6 s; shorter here so a dead name
// server cannot stall shutdown).
const registerTimeout = 3 * time.Second

// Retry backoff after a failed registration: a name server that
// restarted (or whose connection dropped) knows no route of this broker
// until it registers again, so it is retried within a fraction of a
// second instead of at the next RegisterInterval.
const (
	registerRetryMin = 100 * time.Millisecond
	registerRetryMax = 2 * time.Second
)

// registerLoop registers with every name server each RegisterInterval
// (the whole table), whenever the topic table changes (kickRegister: only
// the changed topics, register_incr.go) or a name server connection
// closes, and again soon, with backoff, while any fails.
func (b *Broker) registerLoop() {
	t := time.NewTimer(b.cfg.RegisterInterval)
	defer t.Stop()
	retry := registerRetryMin
	retrying := false // the timer is a retry's, not the interval's
	for {
		whole := false
		select {
		case <-b.stop:
			return
		case <-t.C:
			whole = !retrying
		case <-b.regKick:
		}
		next := b.cfg.RegisterInterval
		var failed int
		if whole {
			failed = b.registerAll(b.ctx)
		} else {
			failed = b.registerChanges(b.ctx)
		}
		if retrying = failed > 0; retrying {
			next, retry = min(retry, next), min(retry*2, registerRetryMax)
		} else {
			retry = registerRetryMin
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(next)
	}
}

// namesrvConnClosed is the name server client's close hook: a name server
// that went away must hear from this broker as soon as it is back.
func (b *Broker) namesrvConnClosed(addr string) {
	b.namesrvNeedsFull(addr)
	b.kickRegister()
}

// kickRegister asks for a registration now (after a topic change). It
// does not wait: the loop coalesces kicks that arrive while it registers.
func (b *Broker) kickRegister() {
	select {
	case b.regKick <- struct{}{}:
	default:
	}
}

// registerAll sends REGISTER_BROKER with the whole topic table to every
// name server in parallel and returns how many failed.
func (b *Broker) registerAll(ctx context.Context) (failed int) {
	if len(b.cfg.NamesrvAddrs) == 0 || b.storeHost.Load() == nil {
		return 0
	}
	b.core.TakeTopicChanges() // the whole table below includes them
	table, version := b.core.Topics()
	writable := b.core.Store().Writable() == nil
	b.inc.writable.Store(writable)
	if !writable {
		table, version = notWritable(table, version)
	}
	return b.registerFullWith(ctx, b.cfg.NamesrvAddrs, table, version)
}

// registerTopicsWith sends REGISTER_BROKER with table (the whole topic
// table or only changed topics; the caller's copy) to the name servers
// addrs in parallel and returns those that failed. A failure is logged
// once until that name server answers again; the loop retries.
func (b *Broker) registerTopicsWith(ctx context.Context, addrs []string, table map[string]protocol.TopicConfig, version protocol.DataVersion) (failed []string) {
	host := b.storeHost.Load()
	if host == nil || len(addrs) == 0 {
		return nil
	}
	// One registration at a time, so the last one a name server applies
	// carries the current brokerId (a role change and a round race
	// otherwise).
	b.regMu.Lock()
	defer b.regMu.Unlock()
	// Whole or partial, a table says the broker's own permission
	// (updateBrokerConfig's brokerPermission) in every topic's.
	table, version = withBrokerPermission(table, version, b.core.Runtime().BrokerPermission)
	body := protocol.RegisterBrokerBody{TopicConfigSerializeWrapper: protocol.TopicConfigSerializeWrapper{
		TopicConfigTable: table, DataVersion: version,
	}}
	payload, err := body.Encode()
	if err != nil {
		b.log.Error("broker: encode registration", "err", err)
		return addrs
	}
	hdr := protocol.RegisterBrokerRequestHeader{
		BrokerName:             b.cfg.BrokerName,
		BrokerAddr:             host.String(),
		ClusterName:            b.cfg.ClusterName,
		HAServerAddr:           "",
		BrokerID:               b.registrationID(),
		HeartbeatTimeoutMillis: protocol.DefaultBrokerHeartbeatTimeoutMillis,
		BodyCRC32:              protocol.BodyCRC32(payload),
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := b.callNamesrv(ctx, addr, protocol.NewRequest(protocol.ReqRegisterBroker, hdr.Encode(), payload))
			_, wasDown := b.nsDown.Load(addr)
			switch {
			case err != nil:
				mu.Lock()
				failed = append(failed, addr)
				mu.Unlock()
				if !wasDown {
					b.nsDown.Store(addr, true)
					b.log.Warn("broker: register with name server failed; retrying", "namesrv", addr, "err", err)
				}
			case wasDown:
				b.nsDown.Delete(addr)
				b.log.Info("broker: registered with name server again", "namesrv", addr)
			}
		}()
	}
	wg.Wait()
	return failed
}

// notWritable is the registration of a broker that refuses writes (a full
// disk, a failed store): every topic without PermWrite, as Java's broker
// registers perm & ~PERM_WRITE when it is not writeable, so producers route
// elsewhere while consumers still read here. The version differs from the
// writable table's, so the name server takes the change (it skips a
// registration whose data version it already has), and differs again when
// the broker is writable once more. table is the caller's copy.
func notWritable(table map[string]protocol.TopicConfig, v protocol.DataVersion) (map[string]protocol.TopicConfig, protocol.DataVersion) {
	for name, tc := range table {
		tc.Perm &^= protocol.PermWrite
		table[name] = tc
	}
	v.StateVersion++
	return table, v
}

// unregisterAll sends UNREGISTER_BROKER to every name server (clean
// shutdown), so clients stop routing here at once instead of after the
// name server's 120 s expiry.
func (b *Broker) unregisterAll() {
	host := b.storeHost.Load()
	if host == nil {
		return
	}
	hdr := protocol.UnregisterBrokerRequestHeader{
		BrokerName: b.cfg.BrokerName, BrokerAddr: host.String(), ClusterName: b.cfg.ClusterName, BrokerID: b.registrationID(),
	}
	var wg sync.WaitGroup
	for _, addr := range b.cfg.NamesrvAddrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.callNamesrv(context.Background(), addr, protocol.NewRequest(protocol.ReqUnregisterBroker, hdr.Encode(), nil)); err != nil {
				b.log.Warn("broker: unregister from name server failed", "namesrv", addr, "err", err)
			}
		}()
	}
	wg.Wait()
}

// registrationID is the brokerId this broker registers with: its own on a
// single broker; in a replicated group 0 while it is the announced master,
// else its slave id (1 + its index in dLegerPeers).
func (b *Broker) registrationID() int64 {
	if b.node == nil {
		return b.cfg.BrokerID
	}
	if b.master.Load() {
		return protocol.MasterID
	}
	return b.cfg.Replication.slaveID()
}

func (b *Broker) callNamesrv(ctx context.Context, addr string, req *protocol.Command) error {
	ctx, cancel := context.WithTimeout(ctx, registerTimeout)
	defer cancel()
	resp, err := b.ns.Invoke(ctx, addr, req)
	if err != nil {
		return err
	}
	if resp.Code != protocol.RespSuccess {
		return fmt.Errorf("broker: name server %s answered %d (%s): %s", addr, resp.Code, protocol.ResponseCodeName(resp.Code), resp.Remark)
	}
	return nil
}
