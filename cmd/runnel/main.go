// Command runnel is the all-in-one entry point for development.
//
//	go run ./cmd/runnel dev
//
// "dev" runs a name server and a broker in one process, on 127.0.0.1:9876
// and 127.0.0.1:10911, with the store in $TMPDIR/runnel-dev (kept across
// runs; --dir moves it, --fresh empties it first). Point any RocketMQ client
// at 127.0.0.1:9876, and a RocketMQ 5 SDK (gRPC) at 127.0.0.1:8081, which
// serves TLS and plaintext alike (--grpc-listen moves it, "" turns it
// off). It prints one line per server once both serve, and stops cleanly
// on SIGINT or SIGTERM.
//
// "dev --tls" serves TLS beside plain connections on both ports
// (tls.server.mode permissive; --tls-mode enforcing refuses plain ones)
// with a certificate generated at start for localhost and 127.0.0.1. Its
// PEM is written beside the store directory (<dir>-tls-cert.pem) for
// clients that verify (runnelctl --tls --tls-ca FILE); it changes on every
// start.
//
// "dev --acl FILE" checks the broker's requests against a plain_acl.yml
// (ACL 1.0); "dev --auth-root NAME:PASSWORD" turns on ACL 2.0 with that
// super user, who manages the others (runnelctl --ak NAME --sk PASSWORD
// user/acl ...). The name server checks nothing, as Java's.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/internal/version"
	"github.com/runnelmq/runnel/namesrv"
	"github.com/runnelmq/runnel/remoting"
	"github.com/runnelmq/runnel/remoting/protocol"
	"github.com/runnelmq/runnel/store"
)

func main() {
	cmd := newCommand(os.Stdout, os.Stderr)
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "runnel: %v\n", err)
		os.Exit(1)
	}
}

func newCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "runnel",
		Short:         "Runnel: a RocketMQ-compatible message broker",
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true, // main prints "runnel: ..." once
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)

	var dir, nsListen, brokerListen, grpcListen, metricsListen, logLevel string
	var fresh, useTLS bool
	var tlsMode, aclFile, authRoot string
	dev := &cobra.Command{
		Use:   "dev",
		Short: "Run a name server and a broker in one process for local development",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level %q: want debug, info, warn or error", logLevel)
			}
			log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
			unlock, err := lockDir(dir)
			if err != nil {
				return err
			}
			defer unlock()
			if fresh {
				if err := emptyDir(dir); err != nil {
					return err
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			dc := devConfig{dir: dir, nsListen: nsListen, brokerListen: brokerListen, grpcListen: grpcListen,
				metricsListen: metricsListen, log: log, aclFile: aclFile}
			if authRoot != "" {
				name, pw, ok := strings.Cut(authRoot, ":")
				if !ok || name == "" || pw == "" {
					return fmt.Errorf("--auth-root %q: want NAME:PASSWORD", authRoot)
				}
				dc.authRoot = &protocol.UserInfo{Username: name, Password: pw}
			}
			if useTLS {
				if dc.tlsMode, err = remoting.ParseTLSMode(tlsMode); err != nil || dc.tlsMode == remoting.TLSDisabled {
					return fmt.Errorf("--tls-mode %q: want permissive or enforcing", tlsMode)
				}
			}
			return runDev(ctx, dc, stdout)
		},
	}
	f := dev.Flags()
	f.StringVar(&dir, "dir", filepath.Join(os.TempDir(), "runnel-dev"), "store directory")
	f.BoolVar(&fresh, "fresh", false, "delete the store directory first")
	f.StringVar(&nsListen, "namesrv-listen", "127.0.0.1:9876", "name server address")
	f.StringVar(&brokerListen, "broker-listen", "127.0.0.1:10911", "broker address")
	f.StringVar(&grpcListen, "grpc-listen", "127.0.0.1:8081", "gRPC door for RocketMQ 5 SDKs, TLS and plaintext (\"\" turns it off)")
	f.StringVar(&metricsListen, "metrics-listen", "127.0.0.1:5557", "broker's Prometheus /metrics address (\"\" turns it off)")
	f.StringVar(&logLevel, "log-level", "warn", "log level: debug, info, warn or error")
	f.BoolVar(&useTLS, "tls", false, "serve TLS too, with a certificate generated at start (written to <dir>-tls-cert.pem)")
	f.StringVar(&tlsMode, "tls-mode", remoting.TLSPermissive, "with --tls: permissive (TLS and plain) or enforcing (TLS only)")
	f.StringVar(&aclFile, "acl", "", "check the broker's requests against this plain_acl.yml (ACL 1.0, reloaded when it changes)")
	f.StringVar(&authRoot, "auth-root", "", "NAME:PASSWORD: turn on ACL 2.0 (authentication and authorization) with this super user; manage others with runnelctl user/acl")
	root.AddCommand(dev)
	return root
}

type devConfig struct {
	dir, nsListen, brokerListen string
	// grpcListen is the gRPC door's address, "" for none.
	grpcListen string
	// aclFile is the broker's plain_acl.yml, "" for none.
	aclFile string
	// authRoot, if set, turns ACL 2.0 on with this super user; the broker
	// signs its own calls with it.
	authRoot *protocol.UserInfo
	// metricsListen is the broker's /metrics address, "" for none.
	metricsListen string
	// tlsMode is "" (plain only) or a TLS mode served with a generated
	// certificate.
	tlsMode string
	log     *slog.Logger
}

// devTLS generates the certificate of a TLS dev cluster and writes its PEM
// for clients that verify.
func devTLS(dc devConfig) (remoting.TLSConfig, string, error) {
	if dc.tlsMode == "" {
		return remoting.TLSConfig{}, "", nil
	}
	cert, certPEM, err := remoting.SelfSignedCertificate()
	if err != nil {
		return remoting.TLSConfig{}, "", err
	}
	path := filepath.Clean(dc.dir) + "-tls-cert.pem"
	if err := os.WriteFile(path, certPEM, 0o644); err != nil {
		return remoting.TLSConfig{}, "", fmt.Errorf("write the TLS certificate: %w", err)
	}
	// The broker's calls to the name server need TLS when it enforces.
	return remoting.TLSConfig{Mode: dc.tlsMode, Certificate: &cert, Enable: dc.tlsMode == remoting.TLSEnforcing}, path, nil
}

// runDev serves a name server and a broker until ctx is done.
func runDev(ctx context.Context, dc devConfig, stdout io.Writer) error {
	start := time.Now()
	tlsCfg, certPath, err := devTLS(dc)
	if err != nil {
		return err
	}
	nscfg := namesrv.DefaultConfig()
	nscfg.ListenAddr = dc.nsListen
	nscfg.Logger = dc.log
	nscfg.TLS = tlsCfg
	ns, err := namesrv.New(nscfg)
	if err != nil {
		return err
	}
	if err := ns.Start(); err != nil {
		return err
	}
	bcfg := config.Default()
	bcfg.ListenAddr = dc.brokerListen
	bcfg.GRPC.ListenAddr = dc.grpcListen
	bcfg.NamesrvAddrs = []string{ns.Addr()}
	bcfg.StoreDir = dc.dir
	bcfg.Logger = dc.log
	if err := bcfg.Metrics.SetAddr(dc.metricsListen); err != nil {
		return errors.Join(err, ns.Close())
	}
	bcfg.TLS = tlsCfg
	if dc.aclFile != "" {
		bcfg.ACLEnable, bcfg.ACLFile = true, dc.aclFile
	}
	if u := dc.authRoot; u != nil {
		bcfg.Auth.AuthenticationEnabled, bcfg.Auth.AuthorizationEnabled = true, true
		bcfg.Auth.InitUsers = []protocol.UserInfo{*u}
		bcfg.Auth.InnerCredentials = acl.Credentials{AccessKey: u.Username, SecretKey: u.Password}
	}
	b, err := broker.New(bcfg)
	if err == nil {
		err = b.Start()
		if err != nil {
			_ = b.Close()
		}
	}
	if errors.Is(err, store.ErrOlderFormat) {
		err = fmt.Errorf("%w (runnel dev --fresh empties %s)", err, dc.dir)
	}
	if err != nil {
		return errors.Join(err, ns.Close())
	}
	fmt.Fprintf(stdout, "namesrv: serving on %s\n", ns.Addr())
	fmt.Fprintf(stdout, "broker: serving on %s (store %s, ready in %v)\n", b.Addr(), dc.dir, time.Since(start).Round(time.Millisecond))
	if a := b.GRPCAddr(); a != "" {
		fmt.Fprintf(stdout, "broker: gRPC for RocketMQ 5 SDKs on %s (TLS and plaintext)\n", a)
	}
	if u := b.MetricsURL(); u != "" {
		fmt.Fprintf(stdout, "broker: metrics at %s\n", u)
	}
	if dc.tlsMode != "" {
		fmt.Fprintf(stdout, "tls: %s on both ports (clients: --tls; to verify: --tls-ca %s)\n", dc.tlsMode, certPath)
	}
	<-ctx.Done()
	// Broker first: it unregisters from the name server as it goes.
	err = errors.Join(b.Close(), ns.Close())
	if err == nil {
		fmt.Fprintf(stdout, "runnel dev: stopped (store %s kept; --fresh empties it)\n", dc.dir)
	}
	return err
}
