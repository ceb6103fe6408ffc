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
// "dev --acl FILE" checks every request against a plain_acl.yml (ACL 1.0),
// the name server's too; the broker signs its registrations with the
// file's first admin account. "dev --auth-root-file FILE" (or
// RUNNEL_AUTH_ROOT=NAME:PASSWORD in the environment) turns on ACL 2.0
// with that super user, read from the file's first line, who manages the
// others (runnelctl user/acl ...); the name server then needs it (the
// broker signs with it) for what changes its routes, and answers route
// queries to anyone. "--auth-root NAME:PASSWORD" works too, but shows the
// password to every local user in ps.
//
// "dev" also serves the web console on 127.0.0.1:8080 and prints its
// address (--console-listen moves it; "" or off turns it off). When the
// default port is taken, dev says so and goes on without the console; an
// address given with --console-listen must be free. With --auth-root the
// console signs as that user and asks for the same name and password.
//
// RUNNEL_CPU_PROFILE=FILE in the environment makes "dev" write a CPU
// profile of itself to FILE, from its start until it stops: how the
// broker is profiled under clients of another process (bench/'s process
// topology; docs/performance.md). RUNNEL_ALLOCS_PROFILE=FILE writes its
// allocation profile to FILE when it stops.
//
// "console" serves the web console alone against any RocketMQ name server
// (--namesrv, --listen; loopback unless told): see its --help.
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
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/broker"
	"github.com/runnelmq/runnel/broker/config"
	"github.com/runnelmq/runnel/console"
	"github.com/runnelmq/runnel/internal/cliflag"
	"github.com/runnelmq/runnel/internal/memlimit"
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
	// main prints "runnel: ..." once.
	root := cliflag.Root(&cobra.Command{Use: "runnel", Short: "Runnel: a RocketMQ-compatible message broker"}, stdout, stderr)

	var dir, nsListen, brokerListen, grpcListen, metricsListen, consoleListen, logLevel, memoryLimit string
	var fresh, useTLS bool
	var tlsMode, aclFile, authRoot, authRootFile string
	dev := &cobra.Command{
		Use:   "dev",
		Short: "Run a name server and a broker in one process for local development",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := cliflag.Logger(stderr, logLevel)
			if err != nil {
				return err
			}
			// Before the store opens: its Pebble sizes follow the limit.
			if _, _, err := memlimit.Apply(memoryLimit, os.Getenv); err != nil {
				return err
			}
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
			if !consoleOff(consoleListen) {
				dc.consoleListen, dc.consoleRequired = consoleListen, cmd.Flags().Changed("console-listen")
			}
			root, ok, err := acl.CredentialsFrom(authRoot, authRootFile, "RUNNEL_AUTH_ROOT", "--auth-root")
			if err != nil {
				return err
			}
			if ok {
				dc.authRoot = &protocol.UserInfo{Username: root.AccessKey, Password: root.SecretKey}
			}
			if useTLS {
				if dc.tlsMode, err = remoting.ParseTLSMode(tlsMode); err != nil || dc.tlsMode == remoting.TLSDisabled {
					return fmt.Errorf("--tls-mode %q: want permissive or enforcing", tlsMode)
				}
			}
			stopProfile, err := startCPUProfile(os.Getenv)
			if err != nil {
				return err
			}
			return errors.Join(runDev(ctx, dc, stdout), stopProfile())
		},
	}
	f := dev.Flags()
	f.StringVar(&dir, "dir", filepath.Join(os.TempDir(), "runnel-dev"), "store directory")
	f.BoolVar(&fresh, "fresh", false, "delete the store directory first")
	f.StringVar(&nsListen, "namesrv-listen", "127.0.0.1:9876", "name server address")
	f.StringVar(&brokerListen, "broker-listen", "127.0.0.1:10911", "broker address")
	f.StringVar(&grpcListen, "grpc-listen", "127.0.0.1:8081", "gRPC door for RocketMQ 5 SDKs, TLS and plaintext (\"\" turns it off)")
	f.StringVar(&metricsListen, "metrics-listen", "127.0.0.1:5557", "broker's Prometheus /metrics address (\"\" turns it off)")
	f.StringVar(&consoleListen, "console-listen", console.DefaultListen, "web console address (\"\" or off turns it off)")
	f.StringVar(&logLevel, "log-level", "warn", "log level: debug, info, warn or error")
	f.StringVar(&memoryLimit, "memory-limit", "", memlimit.FlagUsage)
	f.BoolVar(&useTLS, "tls", false, "serve TLS too, with a certificate generated at start (written to <dir>-tls-cert.pem)")
	f.StringVar(&tlsMode, "tls-mode", remoting.TLSPermissive, "with --tls: permissive (TLS and plain) or enforcing (TLS only)")
	f.StringVar(&aclFile, "acl", "", "check every request against this plain_acl.yml (ACL 1.0, reloaded when it changes; the broker signs as its first admin account)")
	f.StringVar(&authRootFile, "auth-root-file", "", "turn on ACL 2.0 (authentication and authorization) with the super user NAME:PASSWORD on this file's first line (or RUNNEL_AUTH_ROOT=NAME:PASSWORD); manage others with runnelctl user/acl")
	f.StringVar(&authRoot, "auth-root", "", "NAME:PASSWORD: as --auth-root-file, but visible to every local user in ps: prefer the file or RUNNEL_AUTH_ROOT")
	root.AddCommand(dev, newConsoleCommand(stdout, stderr, os.Getenv))
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
	// consoleListen is the web console's address, "" for none. Unless
	// consoleRequired (the address was asked for), a console that cannot
	// listen there is reported and dev goes on without it.
	consoleListen   string
	consoleRequired bool
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
	// The name server is under the broker's access control: the same
	// plain_acl.yml, or ACL 2.0 with the root user, whom the broker signs
	// its registrations as.
	var brokerCreds acl.Credentials
	if dc.aclFile != "" {
		tb, err := acl.OpenPlain(dc.aclFile)
		if err != nil {
			return err
		}
		var ok bool
		if brokerCreds, ok = tb.AdminCredentials(); !ok {
			return fmt.Errorf("--acl %s: no admin account for the broker to sign its registrations with", dc.aclFile)
		}
		nscfg.ACLFile = dc.aclFile
	}
	if u := dc.authRoot; u != nil {
		nscfg.Auth.AuthenticationEnabled, nscfg.Auth.AuthorizationEnabled = true, true
		nscfg.Auth.InitUsers = []protocol.UserInfo{*u}
		nscfg.Auth.InnerCredentials = acl.Credentials{AccessKey: u.Username, SecretKey: u.Password}
	}
	ns, err := namesrv.New(nscfg)
	if err != nil {
		return err
	}
	if err := ns.Start(); err != nil {
		_ = ns.Close()
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
		bcfg.Credentials = brokerCreds
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
	con, err := devConsole(dc, ns.Addr(), certPath, stdout)
	if err != nil {
		return errors.Join(err, b.Close(), ns.Close())
	}
	<-ctx.Done()
	// The console first (it reads the others), then the broker: it
	// unregisters from the name server as it goes.
	if con != nil {
		err = con.Close()
	}
	err = errors.Join(err, b.Close(), ns.Close())
	if err == nil {
		fmt.Fprintf(stdout, "runnel dev: stopped (store %s kept; --fresh empties it)\n", dc.dir)
	}
	return err
}

// devConsole starts dev's web console (nil when it is off). With ACL 2.0
// on, it signs as the super user and asks for the same name and password.
func devConsole(dc devConfig, nsAddr, certPath string, stdout io.Writer) (*console.Console, error) {
	if dc.consoleListen == "" {
		return nil, nil
	}
	cfg := console.DefaultConfig()
	cfg.Listen = dc.consoleListen
	cfg.Admin.NamesrvAddrs = []string{nsAddr}
	cfg.Logger = dc.log
	if dc.tlsMode == remoting.TLSEnforcing {
		cfg.Admin.TLS, cfg.Admin.TLSCAFile = true, certPath
	}
	if u := dc.authRoot; u != nil {
		cfg.Admin.Credentials = acl.Credentials{AccessKey: u.Username, SecretKey: u.Password}
		cfg.Login = console.Login{User: u.Username, Password: u.Password}
	}
	con, err := console.New(cfg)
	if err == nil {
		if err = con.Start(); err != nil {
			_ = con.Close()
		}
	}
	if err != nil {
		if dc.consoleRequired {
			return nil, fmt.Errorf("%w (--console-listen off turns the console off)", err)
		}
		fmt.Fprintf(stdout, "console: not started: %v (--console-listen moves it, off turns it off)\n", err)
		return nil, nil
	}
	fmt.Fprintf(stdout, "console: open %s\n", con.URL())
	return con, nil
}
