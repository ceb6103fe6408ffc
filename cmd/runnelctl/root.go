package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/client"
	"github.com/runnelmq/runnel/client/admin"
	"github.com/runnelmq/runnel/internal/cliflag"
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

// clientConfig is the config of this invocation's producers and pull
// consumers: the global flags' name server, credentials, TLS and timeout;
// the instance is named runnelctl-<role>-<pid>.
func (a *app) clientConfig(role string) client.ClientConfig {
	cfg := client.DefaultClientConfig()
	cfg.NameServerAddrs = []string{a.namesrv}
	cfg.Credentials = a.creds
	cfg.InstanceName = fmt.Sprintf("runnelctl-%s-%d", role, os.Getpid())
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if a.timeout > 0 {
		cfg.CallTimeout = a.timeout
	}
	a.tls.client(&cfg)
	return cfg
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
	root := newRootCmd(a, getenv, args...)
	root.SetArgs(args)
	root.SetIn(stdin)
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

// mqadminNames lists the mqadmin command names runnelctl answers to, for
// the root help.
func mqadminNames() string {
	var b strings.Builder
	line := 0
	for i, c := range mqadminCommands {
		if i > 0 {
			b.WriteString(",")
			line++
			if line+len(c.name) > 78 {
				b.WriteString("\n")
				line = 0
			} else {
				b.WriteString(" ")
				line++
			}
		}
		b.WriteString(c.name)
		line += len(c.name)
	}
	return b.String()
}

// nounCommands are runnelctl's own commands (not completion, help or the
// mqadmin names).
func nounCommands(a *app) []*cobra.Command {
	return []*cobra.Command{newClusterCmd(a), newBrokerCmd(a), newTopicCmd(a), newSendCmd(a), newGroupCmd(a), newMessageCmd(a),
		newDlqCmd(a), newBenchCmd(a), newStatsCmd(a), newUserCmd(a), newACLCmd(a)}
}

// checkGlobals checks the global flags once they are parsed.
func (a *app) checkGlobals() error {
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
}

func newRootCmd(a *app, getenv func(string) string, args ...string) *cobra.Command {
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

mqadmin's command names work too, each with mqadmin's own options (long
names and letters; "runnelctl NAME --help" lists them, and which runnelctl
command it runs). On those commands mqadmin's letters win: -o is, say,
updateSubGroup's consumeMessageOrderly, and --output the output format:
` + mqadminNames() + `.`,
		Example: `  export NAMESRV_ADDR=127.0.0.1:9876
  runnelctl broker list
  runnelctl topic create orders --queues 8
  echo hello | runnelctl send --topic orders --keys order-1
  runnelctl group progress --group billing
  runnelctl message query --topic orders --key order-1 -o json`,
		Args:              cobra.ArbitraryArgs,
		RunE:              helpOrUnknown,
		PersistentPreRunE: func(*cobra.Command, []string) error { return a.checkGlobals() },
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
	cliflag.Root(root, a.stdout, a.stderr)
	// Pad command names to the longest one shown: cobra pads to the
	// longest of all, and the hidden mqadmin aliases are long.
	root.SetUsageTemplate(strings.ReplaceAll(root.UsageTemplate(), "{{rpad .Name .NamePadding }}", "{{rpad .Name (visiblePadding .)}}"))
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if c == root {
			// A flag the root does not know, before any command: the
			// command word, if any, is what is wrong.
			if word := commandWord(root, args); word != "" {
				return helpOrUnknown(root, []string{word})
			}
		}
		return cliflag.FlagError(c, err)
	})

	root.AddCommand(nounCommands(a)...)
	addMqadminCommands(root, a)
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

// nounCmd is a noun command (topic, group, ...): a name, a description
// (long may be "") and examples over the subcommands it groups, given here
// or added after. It has no action of its own; guardGroups gives it one
// that refuses an unknown subcommand.
func nounCmd(use, short, long, example string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Long: long, Example: example}
	cmd.AddCommand(subs...)
	return cmd
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
	s := cmd.SuggestionsFor(args[0])
	for _, c := range cmd.Commands() {
		// The mqadmin names are hidden, so cobra does not suggest them.
		if c.Hidden && strings.EqualFold(c.Name(), args[0]) {
			s = append(s, c.Name())
		}
	}
	if len(s) > 0 {
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

// maxArgs allows up to n arguments, naming what they are.
func maxArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return fmt.Errorf("%s takes at most %s, got %q", cmd.CommandPath(), what, args)
		}
		return nil
	}
}

// groupArg is a consumer group given as the command's argument or with
// --group, as topic commands take their topic.
type groupArg struct{ name string }

// register adds --group to cmd and lets it take the group as its one
// argument.
func (g *groupArg) register(a *app, cmd *cobra.Command) {
	cmd.Args = maxArgs(1, "the group")
	cmd.Flags().StringVarP(&g.name, "group", "g", "", "the consumer group (or the argument)")
	_ = cmd.RegisterFlagCompletionFunc("group", a.completeGroups)
}

// get returns the group: either, or both if they agree; "" when neither
// and it is not required.
func (g *groupArg) get(cmd *cobra.Command, args []string, required bool) (string, error) {
	if len(args) == 0 {
		if required && g.name == "" {
			return "", fmt.Errorf("%s needs the group (the argument or --group)", cmd.CommandPath())
		}
		return g.name, nil
	}
	if cmd.Flags().Changed("group") && g.name != args[0] {
		return "", fmt.Errorf("%s: the argument %q and --group %q differ; give one", cmd.CommandPath(), args[0], g.name)
	}
	return args[0], nil
}

// commandWord is the first word of args that is neither a flag nor a
// root flag's value: the command the user meant ("" if none).
func commandWord(root *cobra.Command, args []string) string {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			return arg
		}
		name := strings.TrimLeft(arg, "-")
		if strings.Contains(name, "=") {
			continue
		}
		var f *pflag.Flag
		if strings.HasPrefix(arg, "--") {
			f = root.PersistentFlags().Lookup(name)
		} else if len(name) == 1 {
			f = root.PersistentFlags().ShorthandLookup(name)
		}
		if f != nil && f.NoOptDefVal == "" {
			i++ // its value
		}
	}
	return ""
}
