package acl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// PlainConfig is plain_acl.yml as RocketMQ 4.x reads it.
type PlainConfig struct {
	GlobalWhiteRemoteAddresses []string  `yaml:"globalWhiteRemoteAddresses"`
	Accounts                   []Account `yaml:"accounts"`
}

// Account is one entry of plain_acl.yml's accounts.
type Account struct {
	AccessKey          string `yaml:"accessKey"`
	SecretKey          string `yaml:"secretKey"`
	WhiteRemoteAddress string `yaml:"whiteRemoteAddress"`
	Admin              bool   `yaml:"admin"`
	// DefaultTopicPerm and DefaultGroupPerm apply to the topics and groups
	// TopicPerms and GroupPerms do not name. Empty is DENY.
	DefaultTopicPerm string `yaml:"defaultTopicPerm"`
	DefaultGroupPerm string `yaml:"defaultGroupPerm"`
	// TopicPerms and GroupPerms hold "name=PERM" entries.
	TopicPerms []string `yaml:"topicPerms"`
	GroupPerms []string `yaml:"groupPerms"`
}

// minKeyLen is one less than the shortest access and secret key Java's
// checkPlainAccessConfig allows (it wants them longer than 6).
const minKeyLen = 6

// Table is a parsed plain_acl.yml, ready to check requests against. It is
// immutable.
type Table struct {
	global   []addrPattern
	accounts map[string]*account
	admins   []string // the admin accounts' access keys, in the file's order
}

type account struct {
	accessKey, secretKey string
	signer               *signer
	white                addrPattern
	admin                bool
	defTopic, defGroup   Perm
	perms                map[string]Perm // topic, or RetryPrefix+group
}

// ParsePlain parses plain_acl.yml. A malformed file, an account without
// keys or with keys of 6 characters or fewer, a duplicate access key, a
// permission that is none of DENY, PUB, SUB, PUB|SUB, or an address pattern
// that does not parse is an error that names it.
func ParsePlain(data []byte) (*Table, error) {
	var pc PlainConfig
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&pc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("acl: plain_acl.yml: %w", err)
	}
	return pc.Table()
}

// OpenPlain reads and parses the plain_acl.yml at path.
func OpenPlain(path string) (*Table, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("acl: %w", err)
	}
	t, err := ParsePlain(data)
	if err != nil {
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	return t, nil
}

// Table validates pc and compiles it.
func (pc PlainConfig) Table() (*Table, error) {
	t := &Table{accounts: make(map[string]*account, len(pc.Accounts))}
	for _, s := range pc.GlobalWhiteRemoteAddresses {
		p, err := parseAddrPattern(s)
		if err != nil {
			return nil, fmt.Errorf("acl: globalWhiteRemoteAddresses: %w", err)
		}
		if p != nil {
			t.global = append(t.global, p)
		}
	}
	for i, a := range pc.Accounts {
		if len(a.AccessKey) <= minKeyLen || len(a.SecretKey) <= minKeyLen {
			return nil, fmt.Errorf("acl: accounts[%d]: accessKey %q and secretKey must be longer than %d characters", i, a.AccessKey, minKeyLen)
		}
		if _, dup := t.accounts[a.AccessKey]; dup {
			return nil, fmt.Errorf("acl: accounts[%d]: accessKey %q appears twice", i, a.AccessKey)
		}
		acc := &account{accessKey: a.AccessKey, secretKey: a.SecretKey, signer: newSigner(a.SecretKey), admin: a.Admin,
			perms: make(map[string]Perm, len(a.TopicPerms)+len(a.GroupPerms))}
		var err error
		if acc.white, err = parseAddrPattern(a.WhiteRemoteAddress); err != nil {
			return nil, fmt.Errorf("acl: account %q: whiteRemoteAddress: %w", a.AccessKey, err)
		}
		if acc.defTopic, err = parseDefault(a.DefaultTopicPerm); err != nil {
			return nil, fmt.Errorf("acl: account %q: defaultTopicPerm: %w", a.AccessKey, err)
		}
		if acc.defGroup, err = parseDefault(a.DefaultGroupPerm); err != nil {
			return nil, fmt.Errorf("acl: account %q: defaultGroupPerm: %w", a.AccessKey, err)
		}
		for _, list := range []struct {
			what    string
			entries []string
			prefix  string
		}{{"topicPerms", a.TopicPerms, ""}, {"groupPerms", a.GroupPerms, RetryPrefix}} {
			for _, e := range list.entries {
				name, perm, ok := strings.Cut(e, "=")
				name = strings.TrimSpace(name)
				p, valid := ParsePerm(perm)
				if !ok || name == "" || !valid {
					return nil, fmt.Errorf("acl: account %q: %s entry %q is not name=DENY|PUB|SUB|PUB|SUB", a.AccessKey, list.what, e)
				}
				acc.perms[list.prefix+name] = p
			}
		}
		t.accounts[a.AccessKey] = acc
		if a.Admin {
			t.admins = append(t.admins, a.AccessKey)
		}
	}
	return t, nil
}

func parseDefault(s string) (Perm, error) {
	if strings.TrimSpace(s) == "" {
		return Deny, nil
	}
	p, ok := ParsePerm(s)
	if !ok {
		return 0, fmt.Errorf("%q is none of DENY, PUB, SUB, PUB|SUB", s)
	}
	return p, nil
}

// AdminCredentials are the first admin account's keys, ok false for a file
// without one: what a process that serves a broker and its name server
// from one file (runnel dev --acl) signs the broker's registrations with.
func (t *Table) AdminCredentials() (c Credentials, ok bool) {
	if len(t.admins) == 0 {
		return c, false
	}
	a := t.accounts[t.admins[0]]
	return Credentials{AccessKey: a.accessKey, SecretKey: a.secretKey}, true
}
