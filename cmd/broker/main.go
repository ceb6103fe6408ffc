// Command broker runs a Runnel broker.
//
//	broker --namesrv 127.0.0.1:9876 --listen 127.0.0.1:10911 --store-dir DIR \
//	       --broker-name broker-a --cluster DefaultCluster --advertise HOST:PORT
//	broker -c broker.conf
//
// A RocketMQ broker.conf is accepted (see config.Config.ApplyProperties for
// the keys understood); flags given on the command line win over it (each
// is a broker.conf key, its help says which), and
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
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/internal/cliflag"
	"github.com/runnelmq/runnel/internal/memlimit"
)

func main() {
	if err := newCommand(os.Stdout, os.Stderr, os.Getenv).Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "broker: %v\n", err)
		os.Exit(1)
	}
}

func newCommand(stdout, stderr io.Writer, getenv func(string) string) *cobra.Command {
	var f cmdFlags
	cmd := &cobra.Command{
		Use:   "broker",
		Short: "Runnel broker (RocketMQ remoting protocol)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := cliflag.Logger(stderr, f.logLevel)
			if err != nil {
				return err
			}
			cfg, err := buildConfig(cmd.Flags(), &f, getenv, log)
			if err != nil {
				return err
			}
			// Before the store opens: its Pebble sizes follow the limit.
			limit, from, err := memlimit.Apply(f.memoryLimit, getenv)
			if err != nil {
				return err
			}
			log.Info("broker: memory limit", "bytes", limit, "from", from)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serve(ctx, cfg, stdout)
		},
	}
	cliflag.Root(cmd, stdout, stderr) // main prints "broker: ..." once
	bindFlags(cmd.Flags(), &f)
	return cmd
}

// cmdFlags holds the flags that are not the broker's configuration.
type cmdFlags struct {
	confFile, logLevel, memoryLimit string
}

// bindFlags defines the command's flags on fs. Every flag but --config,
// --log-level and --memory-limit (the process's) is the broker's configuration, read back through
// flagKeys; its default is only shown, since config.Config's defaults
// (or broker.conf) apply when it is not given.
func bindFlags(fs *pflag.FlagSet, f *cmdFlags) {
	def := config.Default()
	fs.StringVarP(&f.confFile, "config", "c", "", "RocketMQ broker.conf to read first (flags win over it)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&f.memoryLimit, "memory-limit", "", memlimit.FlagUsage)
	fs.StringP("namesrv", "n", "", "name servers, \"host:port;host:port\" (default $NAMESRV_ADDR)")
	fs.String("listen", def.ListenAddr, "address to serve clients on")
	fs.String("store-dir", defaultStoreDir, "message store directory")
	fs.String("broker-name", def.BrokerName, "broker name")
	fs.String("cluster", def.ClusterName, "cluster name")
	fs.String("advertise", "", "ip:port clients use to reach this broker (default: the listen address; an unspecified host becomes this machine's first non-loopback IPv4, else 127.0.0.1)")
	fs.Int64("broker-id", def.BrokerID, "broker id (0 = master)")
	fs.Bool("auto-create-topic", def.AutoCreateTopicEnable, "let producers create topics by sending to them")
	fs.String("flush-disk-type", def.FlushMode.String(), "ASYNC_FLUSH or SYNC_FLUSH")
	fs.String("acl-file", "", "check requests against this plain_acl.yml (turns aclEnable on; default with aclEnable=true: plain_acl.yml beside broker.conf)")
	fs.Bool("dleger", false, "replicate the store over raft with the group in --dleger-peers")
	fs.String("dleger-group", "", "raft group name (default the broker name)")
	fs.String("dleger-peers", "", "the group's raft members, \"n0-host:port;n1-host:port;n2-host:port\"")
	fs.String("dleger-self-id", "", "this node's id among --dleger-peers")
	fs.Duration("raft-heartbeat-timeout", 300*time.Millisecond, "how long a follower waits for its leader before an election (whole milliseconds)")
	fs.Duration("raft-election-timeout", 300*time.Millisecond, "how long a candidate waits for votes (whole milliseconds)")
	fs.Bool("slave-read", false, "let slaves serve pulls")
	fs.String("metrics", "", "host:port to serve Prometheus /metrics on (default off, or as broker.conf says)")
	fs.String("grpc-listen", defaultGRPCListen, "address of the RocketMQ 5 gRPC door (TLS and plaintext on one port; \"\" turns it off)")
	fs.String("grpc-peers", "", "a replicated group's gRPC doors by dLeger id, \"n0-host:port;n1-host:port;...\", so followers route clients to the leader's")
	fs.String("grpc-advertise", "", "ip:port RocketMQ 5 clients are routed to (default: the gRPC listen address, with --advertise's host when given)")
	for _, fk := range flagKeys {
		fl := fs.Lookup(fk.flag)
		fl.Usage += " [broker.conf: " + strings.Join(fk.keys, ", ") + "]"
	}
}

// defaultGRPCListen is the gRPC door's address when neither a flag nor
// broker.conf names one: RocketMQ's proxy port.
const defaultGRPCListen = ":8081"

// defaultStoreDir is the store directory when neither a flag nor
// broker.conf names one.
var defaultStoreDir = filepath.Join(os.TempDir(), "runnel-broker")

// flagKey is a flag that configures the broker and the broker.conf keys it
// stands for.
type flagKey struct {
	flag string
	keys []string
	// pairs turns the flag's value into key=value pairs, where the flag
	// is spelt otherwise than its key; nil: keys[0]=the value.
	pairs func(value string) ([][2]string, error)
}

// flagKeys is every flag that configures the broker. A flag given on the
// command line is applied after broker.conf as its keys, through
// config.Config.Set, so a flag and a key cannot mean different things.
var flagKeys = []flagKey{
	{flag: "namesrv", keys: []string{"namesrvAddr"}},
	{flag: "listen", keys: []string{"listenAddr"}},
	{flag: "store-dir", keys: []string{"storePathRootDir"}},
	{flag: "broker-name", keys: []string{"brokerName"}},
	{flag: "cluster", keys: []string{"brokerClusterName"}},
	{flag: "advertise", keys: []string{"advertiseAddr"}},
	{flag: "broker-id", keys: []string{"brokerId"}},
	{flag: "auto-create-topic", keys: []string{"autoCreateTopicEnable"}},
	{flag: "flush-disk-type", keys: []string{"flushDiskType"}},
	{flag: "acl-file", keys: []string{"aclEnable", "rocketmq.acl.plain.file"}, pairs: func(v string) ([][2]string, error) {
		return [][2]string{{"aclEnable", "true"}, {"rocketmq.acl.plain.file", v}}, nil
	}},
	{flag: "dleger", keys: []string{"enableDLegerCommitLog"}},
	{flag: "dleger-group", keys: []string{"dLegerGroup"}},
	{flag: "dleger-peers", keys: []string{"dLegerPeers"}},
	{flag: "dleger-self-id", keys: []string{"dLegerSelfId"}},
	{flag: "raft-heartbeat-timeout", keys: []string{"raftHeartbeatTimeoutMs"}, pairs: millis("raftHeartbeatTimeoutMs")},
	{flag: "raft-election-timeout", keys: []string{"raftElectionTimeoutMs"}, pairs: millis("raftElectionTimeoutMs")},
	{flag: "slave-read", keys: []string{"slaveReadEnable"}},
	{flag: "metrics", keys: []string{"metricsPromExporterHost", "metricsPromExporterPort", "metricsExporterType"}, pairs: metricsPairs},
	{flag: "grpc-listen", keys: []string{"grpcListenAddr"}},
	{flag: "grpc-advertise", keys: []string{"grpcAdvertiseAddr"}},
	{flag: "grpc-peers", keys: []string{"grpcPeers"}},
}

// millis is a duration flag's key in milliseconds.
func millis(key string) func(string) ([][2]string, error) {
	return func(v string) ([][2]string, error) {
		d, err := time.ParseDuration(v)
		if err != nil || d%time.Millisecond != 0 {
			return nil, fmt.Errorf("%q: want whole milliseconds", v)
		}
		return [][2]string{{key, strconv.FormatInt(d.Milliseconds(), 10)}}, nil
	}
}

// metricsPairs turns the exporter on at host:port, or off for "".
func metricsPairs(v string) ([][2]string, error) {
	if v == "" {
		return [][2]string{{"metricsExporterType", "DISABLE"}}, nil
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return nil, fmt.Errorf("%q: want host:port", v)
	}
	return [][2]string{{"metricsPromExporterHost", host}, {"metricsPromExporterPort", port}, {"metricsExporterType", "PROM"}}, nil
}

// applyFlag sets cfg as the flag fk, given value, says.
func applyFlag(cfg *config.Config, fk flagKey, value string) error {
	pairs := [][2]string{{fk.keys[0], value}}
	if fk.pairs != nil {
		var err error
		if pairs, err = fk.pairs(value); err != nil {
			return fmt.Errorf("--%s %w", fk.flag, err)
		}
	}
	for _, kv := range pairs {
		known, err := cfg.Set(kv[0], kv[1])
		if err != nil {
			return fmt.Errorf("--%s: %w", fk.flag, err)
		}
		if !known { // TestFlagKeys keeps this from happening
			return fmt.Errorf("--%s: broker.conf has no key %s", fk.flag, kv[0])
		}
	}
	return nil
}

// buildConfig layers the configuration: defaults, then broker.conf, then
// the flags given on the command line; NAMESRV_ADDR fills the name servers
// when neither the file nor a flag names any.
func buildConfig(fs *pflag.FlagSet, f *cmdFlags, getenv func(string) string, log *slog.Logger) (config.Config, error) {
	cfg := config.Default()
	cfg.Logger = log
	// The gRPC door serves on the proxy's port unless broker.conf or a
	// flag moves it, or turns it off (grpcListenAddr= empty).
	cfg.GRPC.ListenAddr = defaultGRPCListen
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
	for _, fk := range flagKeys {
		fl := fs.Lookup(fk.flag)
		value, given := fl.Value.String(), fl.Changed
		switch {
		case given:
		case fk.flag == "namesrv" && len(cfg.NamesrvAddrs) == 0:
			value, given = getenv("NAMESRV_ADDR"), true
		case fk.flag == "store-dir" && cfg.StoreDir == "":
			given = true // the flag's default
		}
		if given {
			if err := applyFlag(&cfg, fk, value); err != nil {
				return cfg, err
			}
		}
	}
	if cfg.ACLEnable && cfg.ACLFile == "" {
		cfg.ACLFile = filepath.Join(filepath.Dir(f.confFile), "plain_acl.yml")
	}
	if len(cfg.NamesrvAddrs) == 0 {
		log.Warn("no name server: clients will not find this broker (set --namesrv or NAMESRV_ADDR)")
	}
	return cfg, cfg.Validate()
}

// serve runs the broker until ctx is done.
func serve(ctx context.Context, cfg config.Config, stdout io.Writer) error {
	b, err := broker.New(cfg)
	if err != nil {
		return err
	}
	if err := b.Start(); err != nil {
		_ = b.Close()
		return err
	}
	fmt.Fprintf(stdout, "broker: serving on %s (advertised as %s)\n", b.Addr(), b.AdvertisedAddr())
	if a := b.GRPCAddr(); a != "" {
		fmt.Fprintf(stdout, "broker: gRPC (RocketMQ 5 clients) on %s (advertised as %s)\n", a, b.GRPCAdvertisedAddr())
	}
	if u := b.MetricsURL(); u != "" {
		fmt.Fprintf(stdout, "broker: metrics at %s\n", u)
	}
	<-ctx.Done()
	cfg.Logger.Info("broker: shutting down", "reason", context.Cause(ctx))
	return b.Close()
}
