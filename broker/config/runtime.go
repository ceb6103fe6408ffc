package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/runnelmq/runnel/broker/core"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/topicconf"
)

// Changing the configuration at run time (UPDATE_BROKER_CONFIG, mqadmin
// updateBrokerConfig).
//
// Only the keys in RuntimeKeys change while the broker runs; each is
// applied at once (core.Runtime) and written to RuntimeConfigFile in the
// store directory, which the broker applies over the configuration it is
// given at start (LoadRuntime), so a restart keeps the change. Java writes
// the whole configuration back into the broker.conf it started from; that
// would lose the file's comments and order, and a read-only or shared
// broker.conf would refuse it. So broker.conf is never written: the
// runtime file is small, only the broker writes it, and deleting it
// returns to broker.conf's values.

// RuntimeConfigFile is the file, in Config.StoreDir, holding the keys
// changed at run time, in broker.conf's syntax.
const RuntimeConfigFile = "broker-runtime.conf"

// RuntimeKeys are the broker.conf keys UPDATE_BROKER_CONFIG changes, with
// how each sets core.Runtime from a Config that ApplyProperties filled.
var RuntimeKeys = map[string]func(*core.Runtime, *Config){
	"brokerPermission": func(r *core.Runtime, c *Config) { r.BrokerPermission = c.BrokerPermission },
	"maxMessageSize":   func(r *core.Runtime, c *Config) { r.MaxMessageSize = c.MaxMessageSize },
	"timerMaxDelaySec": func(r *core.Runtime, c *Config) { r.TimerMaxDelay = c.TimerMaxDelay },
}

func runtimeKeyList() string { return strings.Join(slices.Sorted(maps.Keys(RuntimeKeys)), ", ") }

// MinStoreMessageSize is the least body limit the store is opened for, so
// maxMessageSize can be raised at run time up to Java's default even when
// broker.conf starts lower.
const MinStoreMessageSize = 4 << 20

// StoreRecordSlack is what a stored record holds beyond its body.
const StoreRecordSlack = 64 << 10

// ErrUnknownKey marks a key broker.conf does not know either.
var ErrUnknownKey = errors.New("unknown broker config key")

// ErrNotRuntimeKey marks a key broker.conf knows that cannot change while
// the broker runs.
var ErrNotRuntimeKey = errors.New("broker config key cannot change at run time")

// CheckRuntimeKeys refuses keys that cannot change at run time:
// ErrUnknownKey for a key broker.conf does not know, ErrNotRuntimeKey for
// one it knows; the message names the keys that can change.
func CheckRuntimeKeys(props map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if _, ok := RuntimeKeys[k]; ok {
			continue
		}
		var probe Config
		if known, _ := probe.Set(k, props[k]); !known {
			return fmt.Errorf("%w %q (the keys that change at run time: %s)", ErrUnknownKey, k, runtimeKeyList())
		}
		return &keyError{kind: ErrNotRuntimeKey, msg: fmt.Sprintf("broker config key %q cannot change at run time: set it in broker.conf and restart (the keys that can: %s)", k, runtimeKeyList())}
	}
	return nil
}

// keyError is a refused key: its own message, its kind for errors.Is.
type keyError struct {
	kind error
	msg  string
}

func (e *keyError) Error() string { return e.msg }
func (e *keyError) Unwrap() error { return e.kind }

// LoadRuntime applies RuntimeConfigFile, if there is one, to c and
// returns what it held.
func LoadRuntime(c *Config) (map[string]string, error) {
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
		err = CheckRuntimeKeys(props)
	}
	if err == nil {
		_, err = c.ApplyProperties(strings.NewReader(string(text)))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s (written by updateBrokerConfig; fix or delete it): %v", ErrBadConfig, path, err)
	}
	return props, nil
}

// WriteRuntime replaces RuntimeConfigFile in dir with props, durably: a
// crash leaves the old file or the new one.
func WriteRuntime(dir string, props map[string]string) error {
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

// CheckRuntime checks the runtime keys' values beyond what ApplyProperties
// parses; storeMaxBody is the largest maxMessageSize the store was opened
// for (0: no limit).
func (c *Config) CheckRuntime(storeMaxBody int) error {
	switch {
	case c.BrokerPermission <= 0 || c.BrokerPermission&^(topicconf.PermRead|topicconf.PermWrite|topicconf.PermInherit) != 0:
		return fmt.Errorf("brokerPermission %d: want RocketMQ perm bits, 2 (write), 4 (read) or 6 (both)", c.BrokerPermission)
	case c.MaxMessageSize <= 0:
		return fmt.Errorf("maxMessageSize %d is not positive", c.MaxMessageSize)
	case storeMaxBody > 0 && c.MaxMessageSize > storeMaxBody:
		return fmt.Errorf("maxMessageSize %d is above %d, the most this broker's store was opened for: set it in broker.conf and restart", c.MaxMessageSize, storeMaxBody)
	}
	return nil
}
