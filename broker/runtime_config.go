package broker

import (
	"errors"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// updateRuntime changes keys at run time (UPDATE_BROKER_CONFIG, mqadmin
// updateBrokerConfig; config/runtime.go says which and how they persist).
// Every key must be one of config.RuntimeKeys and every value valid, or
// nothing changes: a key broker.conf knows but cannot change now is
// Forbidden (as Java answers a key in its configBlackList), an unknown key
// or a bad value InvalidArgument (Java ignores unknown keys silently).
// The change is on disk before it is applied and answered; a new
// brokerPermission is registered with the name servers first.
func (b *Broker) updateRuntime(props map[string]string, by string) error {
	if len(props) == 0 {
		return nil // as Java: nothing to change
	}
	if err := config.CheckRuntimeKeys(props); err != nil {
		if errors.Is(err, config.ErrUnknownKey) {
			return core.Refuse(core.InvalidArgument, "%v", err)
		}
		return core.Refuse(core.Forbidden, "%v", err)
	}
	b.rtMu.Lock()
	defer b.rtMu.Unlock()
	cfg := b.Config()
	if _, err := cfg.ApplyProperties(strings.NewReader(protocol.FormatProperties(props))); err != nil {
		return core.Refuse(core.InvalidArgument, "updateBrokerConfig: %v", err)
	}
	if err := cfg.CheckRuntime(b.storeMaxBody); err != nil {
		return core.Refuse(core.InvalidArgument, "updateBrokerConfig: %v", err)
	}
	saved := maps.Clone(b.rtSaved)
	maps.Copy(saved, props)
	if err := config.WriteRuntime(b.cfg.StoreDir, saved); err != nil {
		b.log.Error("broker: persist runtime config", "err", err)
		return core.Refuse(core.Internal, "updateBrokerConfig: persist %s: %v", config.RuntimeConfigFile, err)
	}
	b.rtSaved = saved
	old := b.core.Runtime()
	rt := old
	for k := range props {
		config.RuntimeKeys[k](&rt, &cfg)
	}
	b.core.SetRuntime(rt)
	b.log.Info("broker: config updated at run time", "keys", protocol.FormatProperties(props), "by", by)
	if rt.BrokerPermission != old.BrokerPermission {
		b.reg.RegisterAll() // the loop retries what failed
	}
	return nil
}

// formatSeconds is a duration in whole seconds, as broker.conf's *Sec keys.
func formatSeconds(d time.Duration) string { return strconv.FormatInt(int64(d/time.Second), 10) }
