package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/runnelmq/runnel/internal/cliflag"
)

// mqadmin's command names are hidden top-level commands that take
// mqadmin's own options — the long names and short letters RocketMQ's
// tools module declares in each SubCommand's buildCommandlineOptions — and
// run the runnelctl command that does the same (mqadmin_table.go says
// which, option by option). So a script written for mqadmin works as it
// is, and there is one implementation of each thing runnelctl does.
//
// As in mqadmin, every option that takes a value takes one even when it is
// a boolean (updateSubGroup -o true, -s false), and on an mqadmin-named
// command mqadmin's letters win over runnelctl's global ones: -o is
// updateSubGroup's consumeMessageOrderly there, and --output the output
// format. -n is the name server, as everywhere in mqadmin; the other
// global flags keep their long names.

// mqOpt is one option of an mqadmin command.
type mqOpt struct {
	short, long string // short is "" for a long-only option
	// arg: the option takes a value (Java's hasArg), booleans included.
	arg  bool
	desc string
	// required as mqadmin requires it.
	required bool
	// note says how runnelctl takes the option where it differs from
	// mqadmin (shown in --help): accepted without effect, and why.
	note string
}

// mqCmd is one mqadmin command.
type mqCmd struct {
	name, desc string
	// path is the runnelctl command it runs (for its help and the tests).
	path []string
	opts []mqOpt
	// oneOf are groups of options (long names) of which one must be
	// given (Java's required OptionGroup).
	oneOf [][]string
	// every, when set, is an option whose value in seconds repeats the
	// command until interrupted (clusterList -i).
	every   string
	example string
	// output, when set, is the output format mqadmin prints by default
	// ("json"), used unless --output is given.
	output func(v mqValues) string
	// to builds the runnelctl command lines (one, or one per id) from
	// the options given.
	to func(v mqValues) ([][]string, error)
}

// mqValues are the options an mqadmin command was given.
type mqValues struct {
	cmd *mqCmd
	set map[string]string // long name -> value ("true" for a switch)
}

func (v mqValues) has(long string) bool { _, ok := v.set[long]; return ok }
func (v mqValues) str(long string) string {
	return strings.TrimSpace(v.set[long])
}

// flag names an option as a user typed it: "-t/--topic".
func (v mqValues) flag(long string) string {
	for _, o := range v.cmd.opts {
		if o.long == long && o.short != "" {
			return "-" + o.short + "/--" + long
		}
	}
	return "--" + long
}

// boolean reads a boolean option's value: true or false, any case (Java
// takes anything but "true" as false; a typo here is an error instead).
func (v mqValues) boolean(long string) (bool, error) {
	switch strings.ToLower(v.str(long)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%s %q: want true or false", v.flag(long), v.set[long])
}

// whole reads a whole-number option.
func (v mqValues) whole(long string) (int64, error) {
	n, err := strconv.ParseInt(v.str(long), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q: want a whole number", v.flag(long), v.set[long])
	}
	return n, nil
}

// cmdLine builds a runnelctl command line.
type cmdLine []string

// opt adds --name=value when long was given (values may start with '-').
func (c *cmdLine) opt(v mqValues, long, name string) {
	if v.has(long) {
		*c = append(*c, "--"+name+"="+v.str(long))
	}
}

// boolOpt adds --name=true|false when long was given.
func (c *cmdLine) boolOpt(v mqValues, long, name string) error {
	return checkedOpt(c, v, long, name, v.boolean, strconv.FormatBool)
}

// wholeOpt adds --name=N when long was given, checked.
func (c *cmdLine) wholeOpt(v mqValues, long, name string) error {
	return checkedOpt(c, v, long, name, v.whole, func(n int64) string { return strconv.FormatInt(n, 10) })
}

// checkedOpt adds --name=value when long was given: the value read by
// parse (which names the option when it fails) and written back by format.
func checkedOpt[T any](c *cmdLine, v mqValues, long, name string, parse func(long string) (T, error), format func(T) string) error {
	if !v.has(long) {
		return nil
	}
	x, err := parse(long)
	if err != nil {
		return err
	}
	*c = append(*c, "--"+name+"="+format(x))
	return nil
}

// one is a single command line.
func one(c cmdLine) [][]string { return [][]string{c} }

// addMqadminCommands adds every mqadmin command to root, hidden.
func addMqadminCommands(root *cobra.Command, a *app) {
	for _, spec := range mqadminCommands {
		root.AddCommand(a.mqadminCommand(spec))
	}
}

func (a *app) mqadminCommand(spec *mqCmd) *cobra.Command {
	c := &cobra.Command{
		Use:                spec.name + " [options]",
		Short:              spec.desc + " (mqadmin; runnelctl " + strings.Join(spec.path, " ") + ")",
		Example:            "  runnelctl " + spec.example,
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runMqadmin(cmd, spec, args)
		},
	}
	c.SetHelpFunc(func(cmd *cobra.Command, _ []string) {
		fs, _ := a.mqadminFlags(cmd, spec)
		_ = mqadminHelp(cmd.OutOrStdout(), spec, fs)
	})
	return c
}

// mqadminFlags is the flag set of spec's options, then -n/--namesrvAddr
// and runnelctl's global flags under the names and letters mqadmin's
// leave free; set holds the values given.
func (a *app) mqadminFlags(cmd *cobra.Command, spec *mqCmd) (*pflag.FlagSet, map[string]*string) {
	fs := pflag.NewFlagSet(spec.name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	vals := map[string]*string{}
	for _, o := range spec.opts {
		if o.arg {
			vals[o.long] = fs.StringP(o.long, o.short, "", o.desc)
			continue
		}
		vals[o.long] = new(string)
		fs.VarPF(switchValue{vals[o.long]}, o.long, o.short, o.desc).NoOptDefVal = "true"
	}
	fs.BoolP("help", "h", false, "this help")
	fs.StringVarP(&a.namesrv, "namesrvAddr", "n", a.namesrv, "name server address(es), host:port;host:port (env NAMESRV_ADDR)")
	cmd.Root().PersistentFlags().VisitAll(func(f *pflag.Flag) {
		if fs.Lookup(f.Name) != nil || f.Hidden {
			return
		}
		g := *f
		if g.Shorthand != "" && fs.ShorthandLookup(g.Shorthand) != nil {
			g.Shorthand = ""
		}
		fs.AddFlag(&g)
	})
	return fs, vals
}

// switchValue is a switch: an option without a value (Java's hasArg
// false), "true" once given.
type switchValue struct{ set *string }

func (s switchValue) String() string { return *s.set }
func (s switchValue) Type() string   { return "bool" }
func (s switchValue) Set(v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return err
	}
	*s.set = strconv.FormatBool(b)
	return nil
}

// mqRun is what an mqadmin command line asks for.
type mqRun struct {
	help  bool
	lines [][]string    // runnelctl command lines, run in turn
	every time.Duration // repeat them this often until interrupted; 0: once
}

// runMqadmin parses args as mqadmin does for spec and runs the runnelctl
// command lines they become.
func (a *app) runMqadmin(cmd *cobra.Command, spec *mqCmd, args []string) error {
	fs, run, err := a.mqadminParse(cmd, spec, args)
	if err != nil {
		return err
	}
	if run.help {
		return mqadminHelp(a.stdout, spec, fs)
	}
	ctx := cmd.Context()
	for {
		for _, line := range run.lines {
			if err := a.runLine(ctx, line); err != nil {
				return err
			}
		}
		if run.every == 0 {
			return nil
		}
		if err := sleepCtx(ctx, run.every); err != nil {
			return nil // interrupted: the end of a repeated command
		}
	}
}

// mqadminParse reads args as mqadmin does for spec (global flags into a)
// and returns what they ask for.
func (a *app) mqadminParse(cmd *cobra.Command, spec *mqCmd, args []string) (*pflag.FlagSet, mqRun, error) {
	var run mqRun
	fs, vals := a.mqadminFlags(cmd, spec)
	if err := fs.Parse(args); err != nil {
		return fs, run, fmt.Errorf("%s: %w (its options: %s; see runnelctl %s --help)", spec.name, cliflag.FlagError(cmd, err), optionList(spec), spec.name)
	}
	if run.help, _ = fs.GetBool("help"); run.help {
		return fs, run, nil
	}
	if len(fs.Args()) > 0 {
		return fs, run, fmt.Errorf("%s takes options only, got %q (its options: %s)", spec.name, fs.Args(), optionList(spec))
	}
	if err := a.checkGlobals(); err != nil {
		return fs, run, err
	}
	v := mqValues{cmd: spec, set: map[string]string{}}
	for _, o := range spec.opts {
		if f := fs.Lookup(o.long); f.Changed {
			v.set[o.long] = *vals[o.long]
		}
	}
	for _, o := range spec.opts {
		if o.required && !v.has(o.long) {
			return fs, run, fmt.Errorf("%s needs %s (%s)", spec.name, v.flag(o.long), o.desc)
		}
	}
	for _, group := range spec.oneOf {
		if !slices.ContainsFunc(group, v.has) {
			names := make([]string, len(group))
			for i, g := range group {
				names[i] = v.flag(g)
			}
			return fs, run, fmt.Errorf("%s needs one of %s", spec.name, strings.Join(names, " or "))
		}
	}
	if spec.output != nil && !fs.Lookup("output").Changed {
		if out := spec.output(v); out != "" {
			a.output = out
		}
	}
	var err error
	if run.lines, err = spec.to(v); err != nil {
		return fs, run, fmt.Errorf("%s: %w", spec.name, err)
	}
	if spec.every != "" && v.has(spec.every) {
		n, err := v.whole(spec.every)
		if err != nil || n < 1 {
			return fs, run, fmt.Errorf("%s %q: want a whole number of seconds, 1 or more", v.flag(spec.every), v.set[spec.every])
		}
		run.every = time.Duration(n) * time.Second
	}
	return fs, run, nil
}

// runLine runs one runnelctl command line under this invocation's global
// settings (already in a).
func (a *app) runLine(ctx context.Context, line []string) error {
	root := &cobra.Command{Use: "runnelctl", SilenceErrors: true, SilenceUsage: true}
	root.AddCommand(nounCommands(a)...)
	root.SetArgs(line)
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(cliflag.FlagError)
	return root.ExecuteContext(ctx)
}

// optionList is spec's options in short, for an error.
func optionList(spec *mqCmd) string {
	var out []string
	for _, o := range spec.opts {
		if o.short != "" {
			out = append(out, "-"+o.short)
		} else {
			out = append(out, "--"+o.long)
		}
	}
	return strings.Join(out, " ")
}

// mqadminHelp writes spec's help: what it does, its options as mqadmin
// names them, the global ones and an example.
func mqadminHelp(w io.Writer, spec *mqCmd, fs *pflag.FlagSet) error {
	fmt.Fprintf(w, "%s (mqadmin %s), run as runnelctl %s: see runnelctl %s --help.\n\n",
		spec.desc, spec.name, strings.Join(spec.path, " "), strings.Join(spec.path, " "))
	fmt.Fprintf(w, "Usage:\n  runnelctl %s [options]\n\nOptions (mqadmin's; every option with a value takes one, true or false included):\n", spec.name)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, o := range spec.opts {
		name := "    --" + o.long
		if o.short != "" {
			name = "-" + o.short + ", --" + o.long
		}
		if o.arg {
			name += " VALUE"
		}
		desc := o.desc
		if o.required {
			desc += " (required)"
		}
		if o.note != "" {
			desc += " [" + o.note + "]"
		}
		fmt.Fprintf(tw, "  %s\t%s\n", name, desc)
	}
	for _, group := range spec.oneOf {
		fmt.Fprintf(tw, "  (one of --%s is required)\t\n", strings.Join(group, ", --"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	own := map[string]bool{"help": true}
	for _, o := range spec.opts {
		own[o.long] = true
	}
	globals := pflag.NewFlagSet("globals", pflag.ContinueOnError)
	for _, name := range slices.Sorted(maps.Keys(flagNames(fs))) {
		if !own[name] {
			globals.AddFlag(fs.Lookup(name))
		}
	}
	fmt.Fprintf(w, "\nGlobal options:\n%s\nExamples:\n  runnelctl %s\n", globals.FlagUsages(), spec.example)
	return nil
}

func flagNames(fs *pflag.FlagSet) map[string]bool {
	out := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) { out[f.Name] = true })
	return out
}

// unsupported refuses an option runnelctl cannot honour, saying why.
func unsupported(v mqValues, long, why string) error {
	return fmt.Errorf("%s: %s", v.flag(long), why)
}

// refuseTrue refuses a boolean option set to true that runnelctl cannot
// honour; false (what mqadmin does without it) passes.
func refuseTrue(v mqValues, long, why string) error {
	if !v.has(long) {
		return nil
	}
	b, err := v.boolean(long)
	if err != nil {
		return err
	}
	if b {
		return unsupported(v, long, why)
	}
	return nil
}
