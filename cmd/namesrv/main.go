// Command namesrv runs Runnel's name server.
//
//	namesrv --listen 127.0.0.1:9876 --log-level info
//
// It prints "namesrv: serving on ADDR" on stdout once it accepts
// connections, logs to stderr, and exits with status 0 after SIGINT or
// SIGTERM once it has shut down.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/internal/version"
	"github.com/runnelmq/runnel/namesrv"
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
	cmd := &cobra.Command{
		Use:           "namesrv",
		Version:       version.String(),
		Short:         "Runnel name server (RocketMQ remoting protocol)",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true, // main prints "namesrv: ..." once
		RunE: func(cmd *cobra.Command, _ []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level %q: want debug, info, warn or error", logLevel)
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
			cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return serve(ctx, cfg, stdout)
		},
	}
	cmd.SetVersionTemplate("{{.Version}}\n")
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.Flags().StringVar(&cfg.ListenAddr, "listen", cfg.ListenAddr, "address to serve on (host:port)")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	cmd.Flags().StringVar(&cfg.ACLFile, "acl-file", "", "check every request against this RocketMQ plain_acl.yml (reloaded when it changes)")
	cmd.Flags().DurationVar(&cfg.BrokerExpiry, "broker-expiry", cfg.BrokerExpiry, "drop a broker silent for this long")
	cmd.Flags().StringVar(&metricsAddr, "metrics", "", "host:port to serve Prometheus /metrics on (default off)")
	cmd.Flags().StringVar(&tlsMode, "tls-mode", "", "tls.server.mode: disabled (default), permissive (TLS and plain on the port) or enforcing (TLS only)")
	cmd.Flags().StringVar(&tlsCert, "tls-cert", "", "tls.server.certPath: the server certificate, PEM (default with TLS: one generated at start)")
	cmd.Flags().StringVar(&tlsKey, "tls-key", "", "tls.server.keyPath: its unencrypted PEM key")
	return cmd
}

// serve runs the name server until ctx is done.
func serve(ctx context.Context, cfg namesrv.Config, stdout io.Writer) error {
	srv, err := namesrv.New(cfg)
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
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
