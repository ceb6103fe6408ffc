package main

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/spf13/pflag"

	"github.com/runnelmq/runnel/broker/config"
)

// TestFlagKeys: every flag but --config, --log-level and --memory-limit
// (the process's, not the broker's) is in flagKeys (and every entry is a
// flag), each of its keys is one config.Config
// knows, and pairs only writes the entry's keys.
func TestFlagKeys(t *testing.T) {
	fs := pflag.NewFlagSet("broker", pflag.ContinueOnError)
	bindFlags(fs, &cmdFlags{})
	inTable := map[string]bool{}
	for _, fk := range flagKeys {
		if inTable[fk.flag] {
			t.Errorf("--%s twice in flagKeys", fk.flag)
		}
		inTable[fk.flag] = true
		fl := fs.Lookup(fk.flag)
		if fl == nil {
			t.Errorf("flagKeys names --%s, which is not a flag", fk.flag)
			continue
		}
		for _, k := range fk.keys {
			probe := config.Default()
			if known, _ := probe.Set(k, fl.DefValue); !known {
				t.Errorf("--%s: broker.conf has no key %s", fk.flag, k)
			}
		}
		if fk.pairs != nil {
			for _, v := range []string{fl.DefValue, flagSamples[fk.flag]} {
				pairs, err := fk.pairs(v)
				if err != nil && v == flagSamples[fk.flag] {
					t.Errorf("--%s %q: %v", fk.flag, v, err)
				}
				for _, kv := range pairs {
					if !slices.Contains(fk.keys, kv[0]) {
						t.Errorf("--%s %q writes %s, not among its keys %v", fk.flag, v, kv[0], fk.keys)
					}
				}
			}
		}
	}
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Name != "config" && fl.Name != "log-level" && fl.Name != "memory-limit" && !inTable[fl.Name] {
			t.Errorf("--%s configures the broker but is not in flagKeys", fl.Name)
		}
	})
}

// flagSamples gives each flag a value and the broker.conf that says the
// same; TestFlagMeansItsKey checks they build the same configuration.
var flagSamples = map[string]string{
	"namesrv": "10.0.0.1:9876;10.0.0.2:9876", "listen": "127.0.0.1:20911", "store-dir": "/data/x",
	"broker-name": "broker-q", "cluster": "C1", "advertise": "192.0.2.1:20911", "broker-id": "2",
	"auto-create-topic": "false", "flush-disk-type": "SYNC_FLUSH", "acl-file": "/etc/acl.yml",
	"dleger": "true", "dleger-group": "g", "dleger-peers": "n0-127.0.0.1:1;n1-127.0.0.1:2;n2-127.0.0.1:3",
	"dleger-self-id": "n1", "raft-heartbeat-timeout": "1.5s", "raft-election-timeout": "250ms",
	"slave-read": "true", "metrics": "127.0.0.1:7001",
	"grpc-listen": "127.0.0.1:18081", "grpc-advertise": "192.0.2.1:28081",
	"grpc-peers": "n0-192.0.2.1:8101;n1-192.0.2.2:8111",
}

var sampleConf = map[string]string{
	"namesrv": "namesrvAddr=10.0.0.1:9876;10.0.0.2:9876", "listen": "listenAddr=127.0.0.1:20911",
	"store-dir": "storePathRootDir=/data/x", "broker-name": "brokerName=broker-q", "cluster": "brokerClusterName=C1",
	"advertise": "advertiseAddr=192.0.2.1:20911", "broker-id": "brokerId=2", "auto-create-topic": "autoCreateTopicEnable=false",
	"flush-disk-type": "flushDiskType=SYNC_FLUSH", "acl-file": "aclEnable=true\nrocketmq.acl.plain.file=/etc/acl.yml",
	"dleger": "enableDLegerCommitLog=true", "dleger-group": "dLegerGroup=g",
	"dleger-peers": "dLegerPeers=n0-127.0.0.1:1;n1-127.0.0.1:2;n2-127.0.0.1:3", "dleger-self-id": "dLegerSelfId=n1",
	"raft-heartbeat-timeout": "raftHeartbeatTimeoutMs=1500", "raft-election-timeout": "raftElectionTimeoutMs=250",
	"slave-read":  "slaveReadEnable=true",
	"grpc-listen": "grpcListenAddr=127.0.0.1:18081", "grpc-advertise": "grpcAdvertiseAddr=192.0.2.1:28081",
	"grpc-peers": "grpcPeers=n0-192.0.2.1:8101;n1-192.0.2.2:8111",
	"metrics":    "metricsExporterType=PROM\nmetricsPromExporterHost=127.0.0.1\nmetricsPromExporterPort=7001",
}

// TestFlagMeansItsKey: each flag builds the configuration broker.conf
// builds from its keys, and a flag that does not parse as its key is
// refused as the key is.
func TestFlagMeansItsKey(t *testing.T) {
	dir := t.TempDir()
	for _, fk := range flagKeys {
		v, ok := flagSamples[fk.flag]
		if !ok {
			t.Errorf("--%s has no sample", fk.flag)
			continue
		}
		conf := filepath.Join(dir, fk.flag+".conf")
		if err := os.WriteFile(conf, []byte(sampleConf[fk.flag]+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// Validate wants a replicated node's peers and id together.
		base := []string{"--dleger-peers", flagSamples["dleger-peers"], "--dleger-self-id", "n1"}
		fromFlag, ferr := parseArgs(noEnv, discard, append(base, "--"+fk.flag+"="+v)...)
		fromConf, cerr := parseArgs(noEnv, discard, append(base, "-c", conf)...)
		if ferr != nil || cerr != nil {
			t.Errorf("--%s: flag %v, broker.conf %v", fk.flag, ferr, cerr)
			continue
		}
		// Funcs are never DeepEqual; both are the defaults.
		fromFlag.Logger, fromConf.Logger, fromFlag.Now, fromConf.Now = nil, nil, nil, nil
		if fk.flag != "acl-file" { // the default ACL file is beside broker.conf
			if !reflect.DeepEqual(fromFlag, fromConf) {
				t.Errorf("--%s=%s builds\n%+v\nbroker.conf %q builds\n%+v", fk.flag, v, fromFlag, sampleConf[fk.flag], fromConf)
			}
		} else if fromFlag.ACLFile != fromConf.ACLFile || !fromFlag.ACLEnable || !fromConf.ACLEnable {
			t.Errorf("--acl-file: %v %q; broker.conf: %v %q", fromFlag.ACLEnable, fromFlag.ACLFile, fromConf.ACLEnable, fromConf.ACLFile)
		}
	}
	for _, bad := range [][]string{{"--broker-id", "x"}, {"--flush-disk-type", "SOMETIMES"}, {"--raft-election-timeout", "0s"},
		{"--raft-heartbeat-timeout", "1500us"}, {"--dleger-peers", "nope"}, {"--metrics", "nope"}, {"--metrics", "h:port"}} {
		if _, err := parseArgs(noEnv, discard, bad...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
