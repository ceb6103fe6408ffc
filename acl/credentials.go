package acl

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// ParseCredentials reads "NAME:PASSWORD" (an access key and its secret;
// the first colon splits them, so a secret may hold colons). Neither may
// be empty.
func ParseCredentials(s string) (Credentials, error) {
	name, secret, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok || name == "" || secret == "" {
		return Credentials{}, errors.New("acl: want NAME:PASSWORD")
	}
	return Credentials{AccessKey: name, SecretKey: secret}, nil
}

// CredentialsFrom reads NAME:PASSWORD from one of three places, so that a
// secret never has to be on a command line (where every local user sees
// it in ps): the value of a flag (discouraged), the first line of a file,
// or an environment variable's value. At most one of value and file may be
// set; env is read only when neither is. what names the source in errors.
// ok is false when none gives anything.
func CredentialsFrom(value, file, env, what string) (c Credentials, ok bool, err error) {
	switch {
	case value != "" && file != "":
		return c, false, fmt.Errorf("%s: give the credentials or their file, not both", what)
	case file != "":
		data, err := os.ReadFile(file)
		if err != nil {
			return c, false, fmt.Errorf("%s: %w", what, err)
		}
		value, _, _ = strings.Cut(string(data), "\n")
		what += " file " + file
	case value == "" && env != "":
		value = os.Getenv(env)
		what = env
		if value == "" {
			return c, false, nil
		}
	case value == "":
		return c, false, nil
	}
	c, err = ParseCredentials(value)
	if err != nil {
		return c, false, fmt.Errorf("%s: want NAME:PASSWORD", what)
	}
	return c, true, nil
}
