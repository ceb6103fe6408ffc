// Command broker runs a Runnel broker.
//
//	broker --namesrv 127.0.0.1:9876 --listen 127.0.0.1:10911 --store-dir DIR \
//	       --broker-name broker-a --cluster DefaultCluster --advertise HOST:PORT
//	broker -c broker.conf
//
// A RocketMQ broker.conf is accepted (see broker.Config.ApplyProperties for
// the keys understood); flags given on the command line win over it, and
// NAMESRV_ADDR from the environment is used when neither names a name
// server. It prints "broker: serving on ADDR" on stdout once it accepts
// connections, logs to stderr, and on SIGINT or SIGTERM shuts down cleanly
// (held pulls answered, consumer offsets persisted, unregistered from the
// name servers) and exits 0.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/internal/version"
	"github.com/runnelmq/runnel/store"
)

func main() {
	if err := newCommand(os.Stdout, os.Stderr, os.Getenv).Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "broker: %v\n", err)
		os.Exit(1)
	}
}

func newCommand(stdout, stderr io.Writer, getenv func(string) string) *cobra.Command {
	var f flagValues
	var logLevel string
	cmd := &cobra.Command{
		Use:           "broker",
		Version:       version.String(),
		Short:         "Runnel broker (RocketMQ remoting protocol)",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true, // main prints "broker: ..." once
		RunE: func(cmd *cobra.Command, _ []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level %q: want debug, info, warn or error", logLevel)
			}
			log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
			cfg, err := buildConfig(cmd, &f, getenv, log)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serve(ctx, cfg, stdout)
		},
	}
	cmd.SetVersionTemplate("{{.Version}}\n")
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	bindFlags(cmd.Flags(), &f, &logLevel)
	return cmd
}

// bindFlags defines the command's flags on fs.
func bindFlags(fs *pflag.FlagSet, f *flagValues, logLevel *string) {
	def := broker.DefaultConfig()
	fs.StringVarP(&f.confFile, "config", "c", "", "RocketMQ broker.conf to read first (flags win over it)")
	fs.StringVarP(&f.namesrv, "namesrv", "n", "", "name servers, \"host:port;host:port\" (default $NAMESRV_ADDR)")
	fs.StringVar(&f.listen, "listen", def.ListenAddr, "address to serve clients on")
	fs.StringVar(&f.storeDir, "store-dir", filepath.Join(os.TempDir(), "runnel-broker"), "message store directory")
	fs.StringVar(&f.name, "broker-name", def.BrokerName, "broker name")
	fs.StringVar(&f.cluster, "cluster", def.ClusterName, "cluster name")
	fs.StringVar(&f.advertise, "advertise", "", "ip:port clients use to reach this broker (default: the listen address; an unspecified host becomes this machine's first non-loopback IPv4, else 127.0.0.1)")
	fs.Int64Var(&f.brokerID, "broker-id", def.BrokerID, "broker id (0 = master)")
	fs.BoolVar(&f.autoCreate, "auto-create-topic", def.AutoCreateTopicEnable, "let producers create topics by sending to them")
	fs.StringVar(&f.flush, "flush-disk-type", def.FlushMode.String(), "ASYNC_FLUSH or SYNC_FLUSH")
	fs.StringVar(&f.aclFile, "acl-file", "", "check requests against this plain_acl.yml (turns aclEnable on; default with aclEnable=true: plain_acl.yml beside broker.conf)")
	fs.StringVar(logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.BoolVar(&f.dleger, "dleger", false, "replicate the store over raft with the group in --dleger-peers (enableDLegerCommitLog)")
	fs.StringVar(&f.dlegerGroup, "dleger-group", "", "raft group name (dLegerGroup; default the broker name)")
	fs.StringVar(&f.dlegerPeers, "dleger-peers", "", "the group's raft members, \"n0-host:port;n1-host:port;n2-host:port\" (dLegerPeers)")
	fs.StringVar(&f.dlegerSelf, "dleger-self-id", "", "this node's id among --dleger-peers (dLegerSelfId)")
	fs.DurationVar(&f.raftHeartbeat, "raft-heartbeat-timeout", 300*time.Millisecond, "how long a follower waits for its leader before an election (raftHeartbeatTimeoutMs)")
	fs.DurationVar(&f.raftElection, "raft-election-timeout", 300*time.Millisecond, "how long a candidate waits for votes (raftElectionTimeoutMs)")
	fs.BoolVar(&f.slaveRead, "slave-read", false, "let slaves serve pulls (slaveReadEnable)")
	fs.StringVar(&f.metrics, "metrics", "", "host:port to serve Prometheus /metrics on (metricsExporterType=PROM; default off, or as broker.conf says)")
}

// flagValues holds the command line.
type flagValues struct {
	confFile, namesrv, listen, storeDir, name, cluster, advertise, flush string
	metrics                                                              string
	aclFile                                                              string
	autoCreate                                                           bool
	brokerID                                                             int64
	dleger, slaveRead                                                    bool
	dlegerGroup, dlegerPeers, dlegerSelf                                 string
	raftHeartbeat, raftElection                                          time.Duration
}

// buildConfig layers the configuration: defaults, then broker.conf, then
// the flags given on the command line; NAMESRV_ADDR fills the name servers
// when neither the file nor a flag names any.
func buildConfig(cmd *cobra.Command, f *flagValues, getenv func(string) string, log *slog.Logger) (broker.Config, error) {
	cfg := broker.DefaultConfig()
	cfg.Logger = log
	if f.confFile != "" {
		file, err := os.Open(f.confFile)
		if err != nil {
			return cfg, err
		}
		ignored, err := cfg.ApplyProperties(file)
		file.Close()
		if err != nil {
			return cfg, fmt.Errorf("%s: %w", f.confFile, err)
		}
		if len(ignored) > 0 {
			log.Info("broker.conf keys ignored", "file", f.confFile, "keys", ignored)
		}
	}
	fl := cmd.Flags()
	if fl.Changed("namesrv") {
		cfg.NamesrvAddrs = broker.SplitNamesrvAddrs(f.namesrv)
	} else if len(cfg.NamesrvAddrs) == 0 {
		cfg.NamesrvAddrs = broker.SplitNamesrvAddrs(getenv("NAMESRV_ADDR"))
	}
	if fl.Changed("listen") {
		cfg.ListenAddr = f.listen
	}
	if fl.Changed("store-dir") || cfg.StoreDir == "" {
		cfg.StoreDir = f.storeDir
	}
	if fl.Changed("broker-name") {
		cfg.BrokerName = f.name
	}
	if fl.Changed("cluster") {
		cfg.ClusterName = f.cluster
	}
	if fl.Changed("advertise") {
		cfg.AdvertiseAddr = f.advertise
	}
	if fl.Changed("broker-id") {
		cfg.BrokerID = f.brokerID
	}
	if fl.Changed("auto-create-topic") {
		cfg.AutoCreateTopicEnable = f.autoCreate
	}
	if fl.Changed("flush-disk-type") {
		m, err := store.ParseFlushMode(f.flush)
		if err != nil {
			return cfg, err
		}
		cfg.FlushMode = m
	}
	if err := replicationFlags(fl, f, &cfg); err != nil {
		return cfg, err
	}
	if fl.Changed("metrics") {
		if err := cfg.Metrics.SetAddr(f.metrics); err != nil {
			return cfg, fmt.Errorf("--metrics: %w", err)
		}
	}
	if fl.Changed("acl-file") {
		cfg.ACLEnable, cfg.ACLFile = true, f.aclFile
	}
	if cfg.ACLEnable && cfg.ACLFile == "" {
		cfg.ACLFile = filepath.Join(filepath.Dir(f.confFile), "plain_acl.yml")
	}
	if len(cfg.NamesrvAddrs) == 0 {
		log.Warn("no name server: clients will not find this broker (set --namesrv or NAMESRV_ADDR)")
	}
	return cfg, cfg.Validate()
}

// replicationFlags applies the DLedger flags over broker.conf's keys.
func replicationFlags(fl *pflag.FlagSet, f *flagValues, cfg *broker.Config) error {
	r := &cfg.Replication
	if fl.Changed("dleger") {
		r.Enable = f.dleger
	}
	if fl.Changed("dleger-group") {
		r.Group = f.dlegerGroup
	}
	if fl.Changed("dleger-peers") {
		peers, err := broker.ParsePeers(f.dlegerPeers)
		if err != nil {
			return fmt.Errorf("--dleger-peers: %w", err)
		}
		r.Peers = peers
	}
	if fl.Changed("dleger-self-id") {
		r.SelfID = f.dlegerSelf
	}
	if fl.Changed("raft-heartbeat-timeout") {
		r.HeartbeatTimeout = f.raftHeartbeat
	}
	if fl.Changed("raft-election-timeout") {
		r.ElectionTimeout = f.raftElection
	}
	if fl.Changed("slave-read") {
		cfg.SlaveReadEnable = f.slaveRead
	}
	return nil
}

// serve runs the broker until ctx is done.
func serve(ctx context.Context, cfg broker.Config, stdout io.Writer) error {
	b, err := broker.New(cfg)
	if err != nil {
		return err
	}
	if err := b.Start(); err != nil {
		_ = b.Close()
		return err
	}
	fmt.Fprintf(stdout, "broker: serving on %s (advertised as %s)\n", b.Addr(), b.AdvertisedAddr())
	if u := b.MetricsURL(); u != "" {
		fmt.Fprintf(stdout, "broker: metrics at %s\n", u)
	}
	<-ctx.Done()
	cfg.Logger.Info("broker: shutting down", "reason", context.Cause(ctx))
	return b.Close()
}
