package registration

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/topicconf"
)

// registerTimeout bounds one REGISTER_BROKER or UNREGISTER_BROKER call
// (RocketMQ registerBrokerTimeoutMills: 6 s; shorter here so a dead name
// server cannot stall shutdown).
const registerTimeout = 3 * time.Second

// Retry backoff after a failed registration: a name server that
// restarted (or whose connection dropped) knows no route of this broker
// until it registers again, so it is retried within a fraction of a
// second instead of at the next Interval.
const (
	registerRetryMin = 100 * time.Millisecond
	registerRetryMax = 2 * time.Second
)

// namesrvConnClosed is the name server client's close hook: a name server
// that went away must hear from this broker as soon as it is back.
func (r *Registrar) namesrvConnClosed(addr string) {
	r.namesrvNeedsFull(addr)
	r.Kick()
}

// registerAll sends REGISTER_BROKER with the whole topic table to every
// name server in parallel and returns how many failed.
func (r *Registrar) registerAll(ctx context.Context) (failed int) {
	if len(r.cfg.NamesrvAddrs) == 0 || r.host.Load() == nil {
		return 0
	}
	r.cfg.Broker.TakeTopicChanges() // the whole table below includes them
	table, version := r.cfg.Broker.Topics()
	writable := r.cfg.Broker.Writable()
	r.inc.writable.Store(writable)
	if !writable {
		table, version = notWritable(table, version)
	}
	return r.registerFullWith(ctx, r.cfg.NamesrvAddrs, table, version)
}

// registerTopicsWith sends REGISTER_BROKER with table (the whole topic
// table or only changed topics; the caller's copy) to the name servers
// addrs in parallel and returns those that failed. A failure is logged
// once until that name server answers again; the loop retries.
func (r *Registrar) registerTopicsWith(ctx context.Context, addrs []string, table map[string]topicconf.Config, version topicconf.DataVersion) (failed []string) {
	host := r.host.Load()
	if host == nil || len(addrs) == 0 {
		return nil
	}
	// One registration at a time, so the last one a name server applies
	// carries the current brokerId (a role change and a round race
	// otherwise).
	r.regMu.Lock()
	defer r.regMu.Unlock()
	// Whole or partial, a table says the broker's own permission
	// (updateBrokerConfig's brokerPermission) in every topic's.
	table, version = withBrokerPermission(table, version, r.cfg.Broker.Permission())
	body := protocol.RegisterBrokerBody{TopicConfigSerializeWrapper: protocol.TopicConfigSerializeWrapper{
		TopicConfigTable: table, DataVersion: version,
	}}
	payload, err := body.Encode()
	if err != nil {
		r.log.Error("broker: encode registration", "err", err)
		return addrs
	}
	hdr := protocol.RegisterBrokerRequestHeader{
		BrokerName:             r.cfg.BrokerName,
		BrokerAddr:             host.String(),
		ClusterName:            r.cfg.ClusterName,
		HAServerAddr:           "",
		BrokerID:               r.cfg.Broker.ID(),
		HeartbeatTimeoutMillis: protocol.DefaultBrokerHeartbeatTimeoutMillis,
		BodyCRC32:              protocol.BodyCRC32(payload),
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := r.callNamesrv(ctx, addr, protocol.NewRequest(protocol.ReqRegisterBroker, hdr.Encode(), payload))
			_, wasDown := r.nsDown.Load(addr)
			switch {
			case err != nil:
				mu.Lock()
				failed = append(failed, addr)
				mu.Unlock()
				if !wasDown {
					r.nsDown.Store(addr, true)
					r.log.Warn("broker: register with name server failed; retrying", "namesrv", addr, "err", err)
				}
			case wasDown:
				r.nsDown.Delete(addr)
				r.log.Info("broker: registered with name server again", "namesrv", addr)
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
func notWritable(table map[string]topicconf.Config, v topicconf.DataVersion) (map[string]topicconf.Config, topicconf.DataVersion) {
	for name, tc := range table {
		tc.Perm &^= topicconf.PermWrite
		table[name] = tc
	}
	v.StateVersion++
	return table, v
}

// Unregister sends UNREGISTER_BROKER to every name server (a clean
// shutdown), so clients stop routing here at once instead of after the
// name server's 120 s expiry. Nothing is sent before Start.
func (r *Registrar) Unregister() {
	host := r.host.Load()
	if host == nil {
		return
	}
	hdr := protocol.UnregisterBrokerRequestHeader{
		BrokerName: r.cfg.BrokerName, BrokerAddr: host.String(), ClusterName: r.cfg.ClusterName, BrokerID: r.cfg.Broker.ID(),
	}
	var wg sync.WaitGroup
	for _, addr := range r.cfg.NamesrvAddrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.callNamesrv(context.Background(), addr, protocol.NewRequest(protocol.ReqUnregisterBroker, hdr.Encode(), nil)); err != nil {
				r.log.Warn("broker: unregister from name server failed", "namesrv", addr, "err", err)
			}
		}()
	}
	wg.Wait()
}

func (r *Registrar) callNamesrv(ctx context.Context, addr string, req *protocol.Command) error {
	ctx, cancel := context.WithTimeout(ctx, registerTimeout)
	defer cancel()
	resp, err := r.ns.Invoke(ctx, addr, req)
	if err != nil {
		return err
	}
	if resp.Code != protocol.RespSuccess {
		return fmt.Errorf("registration: name server %s answered %d (%s): %s", addr, resp.Code, protocol.ResponseCodeName(resp.Code), resp.Remark)
	}
	return nil
}

// withBrokerPermission is the registration of a broker whose own perm is
// not read and write: every topic's perm ANDed with it, as Java's
// registerBrokerAll does, so routes steer clients away. The version moves
// by an amount of its own per perm (the disk's notWritable moves it by 1),
// so the name server takes each change.
func withBrokerPermission(table map[string]topicconf.Config, v topicconf.DataVersion, perm int) (map[string]topicconf.Config, topicconf.DataVersion) {
	if topicconf.IsReadable(perm) && topicconf.IsWriteable(perm) {
		return table, v
	}
	for name, tc := range table {
		tc.Perm &= perm
		table[name] = tc
	}
	v.StateVersion += 2 * int64(perm+1)
	return table, v
}
