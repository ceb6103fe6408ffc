package broker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
)

// Changing the configuration at run time (UPDATE_BROKER_CONFIG, mqadmin
// updateBrokerConfig).
//
// Only the keys in runtimeKeys change while the broker runs; each is
// applied at once (core.Runtime) and written to RuntimeConfigFile in the
// store directory, which New applies over the configuration it is given,
// so a restart keeps the change. Java writes the whole configuration back
// into the broker.conf it started from; that would lose the file's
// comments and order, and a read-only or shared broker.conf would refuse
// it. So broker.conf is never written: the runtime file is small, only
// the broker writes it, and deleting it returns to broker.conf's values.

// RuntimeConfigFile is the file, in Config.StoreDir, holding the keys
// changed at run time, in broker.conf's syntax.
const RuntimeConfigFile = "broker-runtime.conf"

// runtimeKeys are the broker.conf keys UPDATE_BROKER_CONFIG changes, with
// how each sets core.Runtime from a Config that ApplyProperties filled.
var runtimeKeys = map[string]func(*core.Runtime, *Config){
	"brokerPermission": func(r *core.Runtime, c *Config) { r.BrokerPermission = c.BrokerPermission },
	"maxMessageSize":   func(r *core.Runtime, c *Config) { r.MaxMessageSize = c.MaxMessageSize },
	"timerMaxDelaySec": func(r *core.Runtime, c *Config) { r.TimerMaxDelay = c.TimerMaxDelay },
}

func runtimeKeyList() string { return strings.Join(slices.Sorted(maps.Keys(runtimeKeys)), ", ") }

// minStoreMessageSize is the least body limit the store is opened for, so
// maxMessageSize can be raised at run time up to Java's default even when
// broker.conf starts lower.
const minStoreMessageSize = 4 << 20

// storeRecordSlack is what a stored record holds beyond its body.
const storeRecordSlack = 64 << 10

// errUnknownKey marks a key broker.conf does not know either.
var errUnknownKey = errors.New("unknown broker config key")

// checkRuntimeKeys refuses keys that cannot change at run time, saying
// whether broker.conf knows them (errUnknownKey when not).
func checkRuntimeKeys(props map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if _, ok := runtimeKeys[k]; ok {
			continue
		}
		var probe Config
		if known, _ := probe.Set(k, props[k]); !known {
			return fmt.Errorf("%w %q (the keys that change at run time: %s)", errUnknownKey, k, runtimeKeyList())
		}
		return fmt.Errorf("broker config key %q cannot change at run time: set it in broker.conf and restart (the keys that can: %s)", k, runtimeKeyList())
	}
	return nil
}

// loadRuntimeConfig applies RuntimeConfigFile, if there is one, to c and
// returns what it held.
func loadRuntimeConfig(c *Config) (map[string]string, error) {
	if c.StoreDir == "" {
		return map[string]string{}, nil // Validate refuses it
	}
	path := filepath.Join(c.StoreDir, RuntimeConfigFile)
	text, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("broker: read %s: %w", path, err)
	}
	props, err := protocol.ParseProperties(string(text))
	if err == nil {
		err = checkRuntimeKeys(props)
	}
	if err == nil {
		_, err = c.ApplyProperties(strings.NewReader(string(text)))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s (written by updateBrokerConfig; fix or delete it): %v", ErrBadConfig, path, err)
	}
	return props, nil
}

// writeRuntimeConfig replaces RuntimeConfigFile with props, durably: a
// crash leaves the old file or the new one.
func writeRuntimeConfig(dir string, props map[string]string) error {
	path := filepath.Join(dir, RuntimeConfigFile)
	tmp, err := os.CreateTemp(dir, RuntimeConfigFile+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	text := "# Written by the broker for updateBrokerConfig (runnelctl broker update-config);\n" +
		"# applied over broker.conf at start. Delete it to return to broker.conf's values.\n" +
		protocol.FormatProperties(props)
	if _, err := tmp.WriteString(text); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// handleUpdateBrokerConfig serves UPDATE_BROKER_CONFIG (25): the body is
// properties text. Every key must be one of runtimeKeys and every value
// valid, or nothing changes: a key broker.conf knows but cannot change
// now is NO_PERMISSION (as Java answers a key in its configBlackList), an
// unknown key or a bad value INVALID_PARAMETER (Java ignores unknown keys
// silently). The change is on disk before it is applied and answered; a
// new brokerPermission is registered with the name servers first.
func (b *Broker) handleUpdateBrokerConfig(ctx context.Context, c *remoting.Conn, req *protocol.Command) *protocol.Command {
	props, err := protocol.ParseProperties(string(req.Body))
	if err != nil {
		return errResponse(req, protocol.RespInvalidParameter, "updateBrokerConfig: %v", err)
	}
	if len(props) == 0 {
		return success(req, nil, nil) // as Java: nothing to change
	}
	if err := checkRuntimeKeys(props); err != nil {
		code := protocol.RespNoPermission
		if errors.Is(err, errUnknownKey) {
			code = protocol.RespInvalidParameter
		}
		return errResponse(req, code, "%v", err)
	}
	b.rtMu.Lock()
	defer b.rtMu.Unlock()
	cfg := b.Config()
	if _, err := cfg.ApplyProperties(strings.NewReader(string(req.Body))); err != nil {
		return errResponse(req, protocol.RespInvalidParameter, "updateBrokerConfig: %v", err)
	}
	if err := b.checkRuntime(&cfg); err != nil {
		return errResponse(req, protocol.RespInvalidParameter, "updateBrokerConfig: %v", err)
	}
	saved := maps.Clone(b.rtSaved)
	maps.Copy(saved, props)
	if err := writeRuntimeConfig(b.cfg.StoreDir, saved); err != nil {
		b.log.Error("broker: persist runtime config", "err", err)
		return errResponse(req, protocol.RespSystemError, "updateBrokerConfig: persist %s: %v", RuntimeConfigFile, err)
	}
	b.rtSaved = saved
	old := b.core.Runtime()
	rt := old
	for k := range props {
		runtimeKeys[k](&rt, &cfg)
	}
	b.core.SetRuntime(rt)
	b.log.Info("broker: config updated at run time", "keys", protocol.FormatProperties(props), "by", c.RemoteAddr())
	if rt.BrokerPermission != old.BrokerPermission {
		if b.registerAll(b.ctx) > 0 {
			b.kickRegister() // the loop retries what failed
		}
	}
	return success(req, nil, nil)
}

// checkRuntime checks the runtime keys' values beyond what
// ApplyProperties parses.
func (b *Broker) checkRuntime(c *Config) error {
	switch {
	case c.BrokerPermission <= 0 || c.BrokerPermission&^(protocol.PermRead|protocol.PermWrite|protocol.PermInherit) != 0:
		return fmt.Errorf("brokerPermission %d: want RocketMQ perm bits, 2 (write), 4 (read) or 6 (both)", c.BrokerPermission)
	case c.MaxMessageSize <= 0:
		return fmt.Errorf("maxMessageSize %d is not positive", c.MaxMessageSize)
	case b.storeMaxBody > 0 && c.MaxMessageSize > b.storeMaxBody:
		return fmt.Errorf("maxMessageSize %d is above %d, the most this broker's store was opened for: set it in broker.conf and restart", c.MaxMessageSize, b.storeMaxBody)
	}
	return nil
}

// withBrokerPermission is the registration of a broker whose own perm is
// not read and write: every topic's perm ANDed with it, as Java's
// registerBrokerAll does, so routes steer clients away. The version moves
// by an amount of its own per perm (the disk's notWritable moves it by 1),
// so the name server takes each change.
func withBrokerPermission(table map[string]protocol.TopicConfig, v protocol.DataVersion, perm int) (map[string]protocol.TopicConfig, protocol.DataVersion) {
	if protocol.IsReadable(perm) && protocol.IsWriteable(perm) {
		return table, v
	}
	for name, tc := range table {
		tc.Perm &= perm
		table[name] = tc
	}
	v.StateVersion += 2 * int64(perm+1)
	return table, v
}

// formatSeconds is a duration in whole seconds, as broker.conf's *Sec keys.
func formatSeconds(d time.Duration) string { return strconv.FormatInt(int64(d/time.Second), 10) }
