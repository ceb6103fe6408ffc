package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/internal/cliflag"
	"github.com/runnelmq/runnel/internal/version"
)

// app is the state shared by the commands of one invocation.
type app struct {
	namesrv string
	output  string
	timeout time.Duration
	creds   acl.Credentials // --ak/--sk: signs every request
	tls     tlsFlags        // --tls, --tls-ca (tls.go)

	stdin          io.Reader
	stdout, stderr io.Writer
	// stdinTerminal: stdin is a terminal, so destructive commands ask
	// before they act (--yes skips the question).
	stdinTerminal bool
	// stderrTerminal: stderr is a terminal, so long runs show progress.
	stderrTerminal bool

	adm *admin.Admin // created on first use
}

// admin returns the admin client for --namesrv, creating it once.
func (a *app) admin() (*admin.Admin, error) {
	if a.adm != nil {
		return a.adm, nil
	}
	cfg := admin.DefaultConfig()
	cfg.NamesrvAddrs = []string{a.namesrv}
	cfg.Credentials = a.creds
	if a.timeout > 0 {
		cfg.CallTimeout = a.timeout
	}
	a.tls.admin(&cfg)
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
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, stdinTerminal: isTerminal(stdin), stderrTerminal: isTerminal(stderr)}
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
		fmt.Fprintf(stderr, "runnelctl: %s\n", oneLine(friendlyError(err, a.timeout)))
		return 1
	}
	return 0
}

// isTerminal reports whether r (an io.Reader or io.Writer) is a terminal;
// a variable so that tests can play one.
var isTerminal = func(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// oneLine joins a multi-line error (errors.Join) into one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}

// mqadminNames lists the mqadmin command names runnelctl also answers to,
// for the root help.
const mqadminNames = `clusterList, brokerStatus, getBrokerConfig, topicList, topicRoute, topicStatus,
updateTopic, updateTopicPerm, deleteTopic, statsAll, consumerProgress,
consumerConnection, consumerStatus, producerConnection, resetOffsetByTime,
queryMsgById, queryMsgByKey, queryMsgByOffset, printMsg, consumeMessage,
directConsumeMessage, sendMessage`

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

The name server comes from -n/--namesrv, else the NAMESRV_ADDR environment
variable, else 127.0.0.1:9876. Several name servers may be given separated by ';'.

Output: aligned tables, or with -o json one JSON document (an array for lists);
send -o json writes one JSON object per line as messages go, as consumer -o json
does. Times are RFC 3339. Errors are one line starting "runnelctl: ", exit 1.

mqadmin's command names work too, with the same short flags where they mean
the same (-n name server, -t topic, -g group, -c cluster, -b broker):
` + mqadminNames + `.`,
		Example: `  export NAMESRV_ADDR=127.0.0.1:9876
  runnelctl broker list
  runnelctl topic create orders --queues 8
  echo hello | runnelctl send --topic orders --keys order-1
  runnelctl group progress --group billing
  runnelctl message query --topic orders --key order-1 -o json`,
		Version:       version.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE:          helpOrUnknown,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			switch a.output {
			case "table", "json":
			case "text": // the consumer's word for it
				a.output = "table"
			default:
				return fmt.Errorf("--output %q: want table or json", a.output)
			}
			if strings.TrimSpace(a.namesrv) == "" {
				return errors.New("--namesrv is empty (set it or NAMESRV_ADDR)")
			}
			return cliflag.CheckCredentials(a.creds)
		},
	}
	pf := root.PersistentFlags()
	pf.StringVarP(&a.namesrv, "namesrv", "n", defNamesrv, "name server address(es), host:port;host:port (env NAMESRV_ADDR)")
	pf.StringVarP(&a.output, "output", "o", "table", "output format: table or json")
	pf.StringVar(&a.output, "format", "table", "same as --output (the consumer's old spelling)")
	_ = pf.MarkHidden("format")
	cliflag.Credentials(pf, &a.creds, getenv)
	pf.DurationVar(&a.timeout, "timeout", 5*time.Second, "timeout of each request to a name server or broker")
	a.tls.register(pf)
	_ = root.RegisterFlagCompletionFunc("output", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"table", "json"}, cobra.ShellCompDirectiveNoFileComp
	})
	root.SetVersionTemplate("{{.Version}}\n")
	// Pad command names to the longest one shown: cobra pads to the
	// longest of all, and the hidden mqadmin aliases are long.
	root.SetUsageTemplate(strings.ReplaceAll(root.UsageTemplate(), "{{rpad .Name .NamePadding }}", "{{rpad .Name (visiblePadding .)}}"))
	root.SetFlagErrorFunc(cliflag.FlagError)

	root.AddCommand(newClusterCmd(a), newBrokerCmd(a), newTopicCmd(a), newSendCmd(a), newGroupCmd(a), newMessageCmd(a), newDlqCmd(a), newBenchCmd(a))
	root.AddCommand(newStatsCmd(a))
	root.AddCommand(newUserCmd(a), newACLCmd(a)) // user.go, aclcmd.go
	addMqadminAliases(root, a)
	a.completeNames(root)
	guardGroups(root)
	return root
}

func init() {
	cobra.AddTemplateFunc("visiblePadding", func(c *cobra.Command) int {
		n := 11 // cobra's minimum
		if c.Parent() != nil {
			for _, sib := range c.Parent().Commands() {
				if sib.IsAvailableCommand() || sib.Name() == "help" {
					n = max(n, len(sib.Name()))
				}
			}
		}
		return n
	})
}

// guardGroups makes every command with subcommands and no action of its
// own refuse an unknown subcommand (cobra would print the help and exit
// 0).
func guardGroups(c *cobra.Command) {
	if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.Args = cobra.ArbitraryArgs
		c.RunE = helpOrUnknown
	}
	c.SuggestionsMinimumDistance = 2
	for _, sub := range c.Commands() {
		guardGroups(sub)
	}
}

// helpOrUnknown is the action of a command that only groups others: its
// help without arguments, else an error naming the unknown subcommand and
// cobra's suggestions on one line.
func helpOrUnknown(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
	}
	return errors.New(msg + "; see " + cmd.CommandPath() + " --help")
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
