// Command namesrv runs Runnel's name server.
//
//	namesrv --listen 127.0.0.1:9876 --log-level info
//
// It prints "namesrv: serving on ADDR" on stdout once it accepts
// connections, logs to stderr, and exits with status 0 after SIGINT or
// SIGTERM once it has shut down.
//
// Access control: --acl-file checks every request against a plain_acl.yml
// (ACL 1.0); --auth-root-file FILE (NAME:PASSWORD on its first line, or
// RUNNEL_AUTH_ROOT=NAME:PASSWORD in the environment) turns ACL 2.0 on with
// that administrator, and --auth-inner-file (or RUNNEL_AUTH_INNER) adds
// the account the brokers sign with (their
// innerClientAuthenticationCredentials): what changes the routes then
// needs one of the two, and route queries stay open. The --auth-root and
// --auth-inner flags take NAME:PASSWORD directly, visible in ps.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/internal/cliflag"
	"github.com/runnelmq/runnel/namesrv"
	"github.com/runnelmq/runnel/remoting/protocol"
)

func main() {
	if err := newCommand(os.Stdout, os.Stderr).Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "namesrv: %v\n", err)
		os.Exit(1)
	}
}

func newCommand(stdout, stderr io.Writer) *cobra.Command {
	cfg := namesrv.DefaultConfig()
	var logLevel, metricsAddr, tlsMode, tlsCert, tlsKey string
	var authRoot, authRootFile, authInner, authInnerFile string
	cmd := &cobra.Command{
		Use:   "namesrv",
		Short: "Runnel name server (RocketMQ remoting protocol)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := cliflag.Logger(stderr, logLevel)
			if err != nil {
				return err
			}
			for _, kv := range [][3]string{{"--tls-mode", "tls.server.mode", tlsMode},
				{"--tls-cert", "tls.server.certPath", tlsCert}, {"--tls-key", "tls.server.keyPath", tlsKey}} {
				if kv[2] == "" {
					continue
				}
				if _, err := cfg.TLS.Set(kv[1], kv[2]); err != nil {
					return fmt.Errorf("%s %q: %w", kv[0], kv[2], err)
				}
			}
			if err := cfg.Metrics.SetAddr(metricsAddr); err != nil {
				return fmt.Errorf("--metrics: %w", err)
			}
			if err := authConfig(&cfg, authRoot, authRootFile, authInner, authInnerFile); err != nil {
				return err
			}
			cfg.Logger = log
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serve(ctx, cfg, stdout)
		},
	}
	cliflag.Root(cmd, stdout, stderr) // main prints "namesrv: ..." once
	cmd.Flags().StringVar(&cfg.ListenAddr, "listen", cfg.ListenAddr, "address to serve on (host:port)")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	cmd.Flags().StringVar(&cfg.ACLFile, "acl-file", "", "check every request against this RocketMQ plain_acl.yml (reloaded when it changes)")
	cmd.Flags().StringVar(&authRootFile, "auth-root-file", "", "turn on ACL 2.0 with the administrator NAME:PASSWORD on this file's first line (or RUNNEL_AUTH_ROOT=NAME:PASSWORD)")
	cmd.Flags().StringVar(&authInnerFile, "auth-inner-file", "", "with ACL 2.0: the brokers' account (innerClientAuthenticationCredentials), NAME:PASSWORD on this file's first line (or RUNNEL_AUTH_INNER)")
	cmd.Flags().StringVar(&authRoot, "auth-root", "", "NAME:PASSWORD: as --auth-root-file, but visible to every local user in ps")
	cmd.Flags().StringVar(&authInner, "auth-inner", "", "NAME:PASSWORD: as --auth-inner-file, but visible to every local user in ps")
	cmd.Flags().DurationVar(&cfg.BrokerExpiry, "broker-expiry", cfg.BrokerExpiry, "drop a broker silent for this long")
	cmd.Flags().StringVar(&metricsAddr, "metrics", "", "host:port to serve Prometheus /metrics on (default off)")
	cmd.Flags().StringVar(&tlsMode, "tls-mode", "", "tls.server.mode: disabled (default), permissive (TLS and plain on the port) or enforcing (TLS only)")
	cmd.Flags().StringVar(&tlsCert, "tls-cert", "", "tls.server.certPath: the server certificate, PEM (default with TLS: one generated at start)")
	cmd.Flags().StringVar(&tlsKey, "tls-key", "", "tls.server.keyPath: its unencrypted PEM key")
	return cmd
}

// authConfig turns ACL 2.0 on if an administrator or the brokers' account
// is given, by flag, file or environment.
func authConfig(cfg *namesrv.Config, root, rootFile, inner, innerFile string) error {
	r, hasRoot, err := acl.CredentialsFrom(root, rootFile, "RUNNEL_AUTH_ROOT", "--auth-root")
	if err != nil {
		return err
	}
	in, hasInner, err := acl.CredentialsFrom(inner, innerFile, "RUNNEL_AUTH_INNER", "--auth-inner")
	if err != nil {
		return err
	}
	if !hasRoot && !hasInner {
		return nil
	}
	cfg.Auth.AuthenticationEnabled, cfg.Auth.AuthorizationEnabled = true, true
	if hasRoot {
		cfg.Auth.InitUsers = []protocol.UserInfo{{Username: r.AccessKey, Password: r.SecretKey}}
	}
	cfg.Auth.InnerCredentials = in
	return nil
}

// serve runs the name server until ctx is done.
func serve(ctx context.Context, cfg namesrv.Config, stdout io.Writer) error {
	srv, err := namesrv.New(cfg)
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		_ = srv.Close()
		return err
	}
	fmt.Fprintf(stdout, "namesrv: serving on %s\n", srv.Addr())
	if u := srv.MetricsURL(); u != "" {
		fmt.Fprintf(stdout, "namesrv: metrics at %s\n", u)
	}
	<-ctx.Done()
	cfg.Logger.Info("shutting down", "reason", context.Cause(ctx))
	return srv.Close()
}
