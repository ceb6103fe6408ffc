package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/console"
	"github.com/runnelmq/runnel/internal/cliflag"
)

// consoleOff are the --console-listen values that turn the console off.
func consoleOff(addr string) bool { return addr == "" || strings.EqualFold(addr, "off") }

// EnvConsolePassword gives the console's login password when --password
// does not.
const EnvConsolePassword = "RUNNEL_CONSOLE_PASSWORD"

// newConsoleCommand is "runnel console": the web console alone, against
// any RocketMQ name server.
func newConsoleCommand(stdout, stderr io.Writer, getenv func(string) string) *cobra.Command {
	cfg := console.DefaultConfig()
	var namesrv, logLevel, loginFile, tlsCA string
	var useTLS bool
	cmd := &cobra.Command{
		Use:   "console",
		Short: "Serve the web console against a RocketMQ cluster (Runnel's or Apache's)",
		Long: `Serve the web console: pages to see and steer a RocketMQ cluster (brokers, topics,
consumer groups, messages, dead letters, producers, access control), with charts of
rates and lag and a JSON API under /api. It speaks to the name servers and brokers
only with RocketMQ's admin requests, so it works against Apache RocketMQ too.

It listens on loopback unless --listen says otherwise. For a cluster with ACL, give
the credentials it signs with (--ak/--sk) and a login of its own that it asks for
(--user and --password, or --login-file with one line USER:PASSWORD); it refuses
to start with credentials and no login.`,
		Example: `  runnel console --namesrv 127.0.0.1:9876
  runnel console --namesrv 'ns1:9876;ns2:9876' --listen 0.0.0.0:8080 --ak admin --sk secret --login-file /etc/runnel/console.login`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := cliflag.Logger(stderr, logLevel)
			if err != nil {
				return err
			}
			cfg.Logger = log
			if err := cliflag.CheckCredentials(cfg.Admin.Credentials); err != nil {
				return err
			}
			cfg.Admin.NamesrvAddrs = []string{namesrv}
			cfg.Admin.TLS, cfg.Admin.TLSCAFile = useTLS, tlsCA
			if cfg.Login.Password == "" {
				cfg.Login.Password = getenv(EnvConsolePassword)
			}
			if loginFile != "" {
				if cfg.Login.User != "" {
					return errors.New("--login-file and --user exclude each other")
				}
				l, err := readLoginFile(loginFile)
				if err != nil {
					return err
				}
				cfg.Login = l
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runConsole(ctx, cfg, stdout)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&namesrv, "namesrv", "n", envOr(getenv, "NAMESRV_ADDR", admin.DefaultNamesrvAddr), "name server address(es), ';'-separated (env NAMESRV_ADDR)")
	f.StringVar(&cfg.Listen, "listen", console.DefaultListen, "HTTP address to serve on (loopback unless told)")
	f.StringVar(&cfg.Login.User, "user", "", "the console's own login user (with --password)")
	f.Var((*secretFlag)(&cfg.Login.Password), "password", "the console's own login password (env "+EnvConsolePassword+")")
	f.StringVar(&loginFile, "login-file", "", "file holding the console's login as one line USER:PASSWORD")
	cliflag.Credentials(f, &cfg.Admin.Credentials, getenv)
	f.BoolVar(&useTLS, "tls", false, "speak TLS to the name servers and brokers")
	f.StringVar(&tlsCA, "tls-ca", "", "with --tls, verify the servers against this CA PEM file")
	f.DurationVar(&cfg.SampleInterval, "sample-interval", cfg.SampleInterval, "how often the cluster is read for the lists and charts")
	f.DurationVar(&cfg.History, "history", cfg.History, "how far back the charts go")
	f.StringVar(&logLevel, "log-level", "warn", "log level: debug, info, warn or error")
	cmd.SetFlagErrorFunc(cliflag.FlagError)
	cmd.AddCommand(newConsoleProbeCommand(stdout))
	return cmd
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

// secretFlag is a string flag whose value the help never prints.
type secretFlag string

func (s *secretFlag) String() string     { return "" }
func (s *secretFlag) Set(v string) error { *s = secretFlag(v); return nil }
func (s *secretFlag) Type() string       { return "string" }

// readLoginFile reads USER:PASSWORD from the first non-empty line of path.
func readLoginFile(path string) (console.Login, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return console.Login{}, fmt.Errorf("--login-file: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		user, pw, ok := strings.Cut(line, ":")
		if !ok || user == "" || pw == "" {
			return console.Login{}, fmt.Errorf("--login-file %s: want one line USER:PASSWORD", path)
		}
		return console.Login{User: user, Password: pw}, nil
	}
	return console.Login{}, fmt.Errorf("--login-file %s is empty: want one line USER:PASSWORD", path)
}

// runConsole serves the console until ctx is done.
func runConsole(ctx context.Context, cfg console.Config, stdout io.Writer) error {
	con, err := console.New(cfg)
	if err != nil {
		return err
	}
	if err := con.Start(); err != nil {
		_ = con.Close()
		return err
	}
	fmt.Fprintf(stdout, "console: serving on %s (name server %s)\n", con.URL(), strings.Join(cfg.Admin.NamesrvAddrs, ";"))
	<-ctx.Done()
	return con.Close()
}

// newConsoleProbeCommand is "runnel console probe ADDR": the compose
// healthcheck of a console (the FROM-scratch image has no curl).
func newConsoleProbeCommand(stdout io.Writer) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "probe ADDR",
		Short: "Exit 0 when a console at ADDR (host:port) answers /healthz",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, _, err := net.SplitHostPort(args[0]); err != nil {
				return fmt.Errorf("probe %q: want host:port", args[0])
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+args[0]+"/healthz", nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return fmt.Errorf("probe %s: %w", args[0], err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("probe %s: answered %s", args[0], resp.Status)
			}
			fmt.Fprintf(stdout, "%s: up\n", args[0])
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Second, "how long to wait for the answer")
	return cmd
}
