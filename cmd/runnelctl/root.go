package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/client/admin"
)

// app is the state shared by the commands of one invocation.
type app struct {
	namesrv string
	output  string
	timeout time.Duration

	stdin          io.Reader
	stdout, stderr io.Writer

	adm *admin.Admin // created on first use
}

// admin returns the admin client for --namesrv, creating it once.
func (a *app) admin() (*admin.Admin, error) {
	if a.adm != nil {
		return a.adm, nil
	}
	cfg := admin.DefaultConfig()
	cfg.NamesrvAddrs = []string{a.namesrv}
	if a.timeout > 0 {
		cfg.CallTimeout = a.timeout
	}
	adm, err := admin.New(cfg)
	if err != nil {
		return nil, err
	}
	a.adm = adm
	return adm, nil
}

func (a *app) close() {
	if a.adm != nil {
		_ = a.adm.Close()
	}
}

// run executes the command line and returns the exit code: 0, or 1 with a
// one-line "runnelctl: ..." message on stderr.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) (code int) {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	defer a.close()
	defer func() {
		// A bug must still end as a clear one-line error, not a stack dump.
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "runnelctl: internal error: %v\n", p)
			code = 1
		}
	}()
	root := newRootCmd(a, getenv)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintf(stderr, "runnelctl: %s\n", oneLine(err))
		return 1
	}
	return 0
}

// oneLine joins a multi-line error (errors.Join) into one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}

func newRootCmd(a *app, getenv func(string) string) *cobra.Command {
	defNamesrv := getenv("NAMESRV_ADDR")
	if defNamesrv == "" {
		defNamesrv = admin.DefaultNamesrvAddr
	}
	root := &cobra.Command{
		Use:   "runnelctl",
		Short: "Administer a Runnel or RocketMQ cluster",
		Long: `runnelctl administers a Runnel cluster — or any Apache RocketMQ cluster, since it
speaks RocketMQ's remoting protocol: brokers, topics, sending messages, consumer
groups and their offsets, and finding messages by id or key.

The name server comes from --namesrv, else the NAMESRV_ADDR environment
variable, else 127.0.0.1:9876. Several name servers may be given separated by ';'.`,
		Example: `  export NAMESRV_ADDR=127.0.0.1:9876
  runnelctl broker list
  runnelctl topic create orders --queues 8
  echo hello | runnelctl send --topic orders --keys order-1
  runnelctl group progress --group billing
  runnelctl message query --topic orders --key order-1 -o json`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			switch a.output {
			case "table", "json":
			default:
				return fmt.Errorf("--output %q: want table or json", a.output)
			}
			if strings.TrimSpace(a.namesrv) == "" {
				return errors.New("--namesrv is empty (set it or NAMESRV_ADDR)")
			}
			return nil
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.namesrv, "namesrv", defNamesrv, "name server address(es), host:port;host:port (env NAMESRV_ADDR)")
	pf.StringVarP(&a.output, "output", "o", "table", "output format: table or json")
	pf.DurationVar(&a.timeout, "timeout", 5*time.Second, "timeout of each request to a name server or broker")
	_ = root.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"table", "json"}, cobra.ShellCompDirectiveNoFileComp
	})

	root.AddCommand(newClusterCmd(a), newBrokerCmd(a), newTopicCmd(a), newSendCmd(a), newGroupCmd(a), newMessageCmd(a), newBenchCmd(a))
	return root
}

// noArgs is cobra.NoArgs with a message naming the command.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args)
	}
	return nil
}

// exactArgs is cobra.ExactArgs with a message naming what is expected.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return fmt.Errorf("%s needs %s (got %d arguments)", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}
