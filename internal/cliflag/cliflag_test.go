package cliflag

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestFlagError(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"--n abc", `--n "abc": want a whole number`},
		{"--d soon", `--d "soon": want a duration such as 500ms`},
		{"--b=maybe", `--b "maybe": want true or false`},
	} {
		c := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }, SilenceErrors: true, SilenceUsage: true}
		c.Flags().IntP("n", "q", 0, "")
		c.Flags().Duration("d", 0, "")
		c.Flags().Bool("b", false, "")
		c.SetFlagErrorFunc(FlagError)
		c.SetArgs(strings.Fields(tc.args))
		err := c.Execute()
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "strconv") {
			t.Errorf("%s: %v, want %q", tc.args, err, tc.want)
		}
	}
}
