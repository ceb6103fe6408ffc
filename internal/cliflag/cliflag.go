// Package cliflag owns what Runnel's command lines share: how a flag value
// that does not parse is reported, --ak/--sk, --log-level, and what every
// binary's root command does (--version, output, errors printed once).
package cliflag

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
)

// FlagError is a cobra FlagErrorFunc that rewrites pflag's parse errors of
// numeric, duration and boolean flags, which quote strconv
// (`invalid argument "abc" for "-q, --queues" flag: strconv.ParseInt:
// parsing "abc": invalid syntax`), as `--queues "abc": want a whole
// number`. Other errors pass through.
func FlagError(_ *cobra.Command, err error) error {
	m := badValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	what := "a whole number"
	switch {
	case strings.HasPrefix(m[3], "time: "):
		what = "a duration such as 500ms, 5s or 1m"
	case strings.Contains(m[3], "ParseBool"):
		what = "true or false"
	case strings.Contains(m[3], "ParseFloat"):
		what = "a number"
	}
	return fmt.Errorf("%s %q: want %s", m[2], m[1], what)
}

var badValue = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?(--[\w-]+)" flag: (strconv\.\w+|time: .*)`)
