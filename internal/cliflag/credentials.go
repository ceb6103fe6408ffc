package cliflag

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/runnelmq/runnel/acl"
)

// Environment variables that give the credentials when --ak/--sk do not.
const (
	EnvAccessKey = "RUNNEL_ACCESS_KEY"
	EnvSecretKey = "RUNNEL_SECRET_KEY"
)

// Credentials defines --ak and --sk on fs, filling c, with
// RUNNEL_ACCESS_KEY and RUNNEL_SECRET_KEY (read through getenv) as their
// defaults. The secret's default is not shown in the help.
func Credentials(fs *pflag.FlagSet, c *acl.Credentials, getenv func(string) string) {
	fs.StringVar(&c.AccessKey, "ak", getenv(EnvAccessKey), "access key to sign requests with, for a cluster with ACL (env "+EnvAccessKey+")")
	c.SecretKey = getenv(EnvSecretKey)
	fs.Var((*secret)(&c.SecretKey), "sk", "secret key of --ak (env "+EnvSecretKey+")")
}

// CheckCredentials reports an access key without a secret key, or the
// reverse.
func CheckCredentials(c acl.Credentials) error {
	switch {
	case c.AccessKey != "" && c.SecretKey == "":
		return errors.New("--ak needs --sk (or " + EnvSecretKey + ")")
	case c.AccessKey == "" && c.SecretKey != "":
		return errors.New("--sk needs --ak (or " + EnvAccessKey + ")")
	}
	return nil
}

// secret is a string flag whose value the help never prints.
type secret string

func (s *secret) String() string     { return "" }
func (s *secret) Set(v string) error { *s = secret(v); return nil }
func (s *secret) Type() string       { return "string" }
