package cliflag

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/internal/version"
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

func TestCredentials(t *testing.T) {
	env := map[string]string{EnvAccessKey: "envAK1234", EnvSecretKey: "envSK1234"}
	for _, tc := range []struct {
		args     []string
		env      map[string]string
		ak, sk   string
		checkErr string
	}{
		{nil, env, "envAK1234", "envSK1234", ""},
		{[]string{"--ak", "flagAK123", "--sk", "flagSK123"}, env, "flagAK123", "flagSK123", ""},
		{[]string{"--ak", "flagAK123"}, nil, "flagAK123", "", "--ak needs --sk"},
		{[]string{"--sk", "flagSK123"}, nil, "", "flagSK123", "--sk needs --ak"},
		{nil, nil, "", "", ""},
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		var c acl.Credentials
		Credentials(fs, &c, func(k string) string { return tc.env[k] })
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if c.AccessKey != tc.ak || c.SecretKey != tc.sk {
			t.Errorf("%v: got %q/%q, want %q/%q", tc.args, c.AccessKey, c.SecretKey, tc.ak, tc.sk)
		}
		err := CheckCredentials(c)
		if tc.checkErr == "" && err != nil || tc.checkErr != "" && (err == nil || !strings.Contains(err.Error(), tc.checkErr)) {
			t.Errorf("%v: CheckCredentials %v, want %q", tc.args, err, tc.checkErr)
		}
		if strings.Contains(fs.FlagUsages(), "envSK1234") {
			t.Errorf("help shows the secret key: %s", fs.FlagUsages())
		}
	}
}

func TestLogger(t *testing.T) {
	var out strings.Builder
	log, err := Logger(&out, "WARN")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hidden")
	log.Warn("shown")
	if s := out.String(); strings.Contains(s, "hidden") || !strings.Contains(s, "shown") {
		t.Errorf("a warn logger wrote %q", s)
	}
	if _, err := Logger(&out, "loud"); err == nil || err.Error() != `--log-level "loud": want debug, info, warn or error` {
		t.Errorf("--log-level loud: %v", err)
	}
}

func TestRoot(t *testing.T) {
	var out, errOut strings.Builder
	root := func(args ...string) error {
		c := Root(&cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return errors.New("boom") }}, &out, &errOut)
		c.SetArgs(args)
		return c.Execute()
	}
	if err := root("--version"); err != nil || out.String() != version.String()+"\n" {
		t.Errorf("--version: %v, printed %q", err, out.String())
	}
	if err := root(); err == nil || errOut.String() != "" {
		t.Errorf("a failing run: %v, printed %q on stderr", err, errOut.String())
	}
}
