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

// registerLoop registers with every name server each RegisterInterval and
// whenever the topic table changes (kickRegister).
func (b *Broker) registerLoop() {
	t := time.NewTicker(b.cfg.RegisterInterval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		case <-b.regKick:
		}
		b.registerAll(b.ctx)
	}
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
// name server in parallel. Failures are logged; the next round retries.
func (b *Broker) registerAll(ctx context.Context) {
	if len(b.cfg.NamesrvAddrs) == 0 {
		return
	}
	host := b.storeHost.Load()
	if host == nil {
		return
	}
	table, version := b.core.Topics()
	body := protocol.RegisterBrokerBody{TopicConfigSerializeWrapper: protocol.TopicConfigSerializeWrapper{
		TopicConfigTable: table, DataVersion: version,
	}}
	payload, err := body.Encode()
	if err != nil {
		b.log.Error("broker: encode registration", "err", err)
		return
	}
	hdr := protocol.RegisterBrokerRequestHeader{
		BrokerName:             b.cfg.BrokerName,
		BrokerAddr:             host.String(),
		ClusterName:            b.cfg.ClusterName,
		HAServerAddr:           "",
		BrokerID:               b.cfg.BrokerID,
		HeartbeatTimeoutMillis: protocol.DefaultBrokerHeartbeatTimeoutMillis,
		BodyCRC32:              protocol.BodyCRC32(payload),
	}
	var wg sync.WaitGroup
	for _, addr := range b.cfg.NamesrvAddrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.callNamesrv(ctx, addr, protocol.NewRequest(protocol.ReqRegisterBroker, hdr.Encode(), payload)); err != nil {
				b.log.Warn("broker: register with name server failed", "namesrv", addr, "err", err)
			}
		}()
	}
	wg.Wait()
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
		BrokerName: b.cfg.BrokerName, BrokerAddr: host.String(), ClusterName: b.cfg.ClusterName, BrokerID: b.cfg.BrokerID,
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
