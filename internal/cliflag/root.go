package cliflag

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/runnelmq/runnel/internal/version"
)

// Root gives cmd what the root command of every Runnel binary has:
// --version printing the bare version (internal/version), stdout and
// stderr as its output, and neither usage nor the error printed when it
// fails (its main prints the error once, in one line). It returns cmd.
func Root(cmd *cobra.Command, stdout, stderr io.Writer) *cobra.Command {
	cmd.Version = version.String()
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetVersionTemplate("{{.Version}}\n")
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	return cmd
}
