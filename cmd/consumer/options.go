package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/runnelmq/runnel/acl"
	"github.com/runnelmq/runnel/broker/filter/sql92"
	"github.com/runnelmq/runnel/client/offset"
	"github.com/runnelmq/runnel/internal/cliflag"
)

// defaultNamesrv is used when neither --namesrv nor NAMESRV_ADDR is set.
const defaultNamesrv = "127.0.0.1:9876"

// flags holds the command line as given.
type flags struct {
	namesrv     string
	topic       string
	group       string
	tag         string
	sql         string
	tagSet      bool // --tag was given
	sqlSet      bool // --sql was given
	from        string
	orderly     bool
	broadcast   bool
	format      string
	max         int
	idleTimeout time.Duration
	logLevel    string
	creds       acl.Credentials // --ak/--sk
	tls         bool            // --tls
	tlsCA       string          // --tls-ca
}

// plan is a validated command line.
type plan struct {
	namesrvs []string
	creds    acl.Credentials
	topic    string
	// group is --group; "" reads the topic without a group (reader.go).
	group    string
	expr     string
	sql      bool // expr is a SQL92 condition, not a tag expression
	from     offset.ConsumeFrom
	fromTime time.Time // when from is ConsumeFromTimestamp
	fromText string    // as shown to the user
	// orderly selects a group's orderly listener: asked for with
	// --orderly, and forced by --max because only the orderly path can
	// refuse a message without acknowledging it (see consume.go). Without
	// a group each queue is read in order anyway.
	orderly   bool
	broadcast bool
	json      bool
	max       int
	idle      time.Duration
	logLevel  slog.Level
	// tls and tlsCA are the client's TLS and TLSCAFile.
	tls   bool
	tlsCA string
}

// namePattern is RocketMQ's character rule for topics and groups.
var namePattern = regexp.MustCompile(`^[%|a-zA-Z0-9_-]+$`)

// validate checks f and turns it into a plan; errors name the flag.
func (f *flags) validate(now time.Time) (plan, error) {
	p := plan{
		topic:     strings.TrimSpace(f.topic),
		group:     strings.TrimSpace(f.group),
		orderly:   f.orderly || f.max > 0,
		broadcast: f.broadcast,
		max:       f.max,
		idle:      f.idleTimeout,
		tls:       f.tls,
		tlsCA:     f.tlsCA,
	}
	if f.tlsCA != "" && !f.tls {
		return p, fmt.Errorf("--tls-ca %s needs --tls", f.tlsCA)
	}
	for _, part := range strings.Split(f.namesrv, ";") {
		part = strings.TrimSpace(part)
		part = strings.TrimPrefix(strings.TrimPrefix(part, "http://"), "https://")
		if part == "" {
			continue
		}
		if _, port, err := net.SplitHostPort(part); err != nil || port == "" {
			return plan{}, fmt.Errorf("--namesrv %q: want host:port (several separated by ';')", f.namesrv)
		}
		p.namesrvs = append(p.namesrvs, part)
	}
	if len(p.namesrvs) == 0 {
		return plan{}, errors.New("--namesrv is empty (set it or NAMESRV_ADDR)")
	}
	if err := cliflag.CheckCredentials(f.creds); err != nil {
		return plan{}, err
	}
	p.creds = f.creds
	switch {
	case p.topic == "":
		return plan{}, errors.New("--topic is required")
	case len(p.topic) > 127 || !namePattern.MatchString(p.topic):
		return plan{}, fmt.Errorf("--topic %q: want 1..127 letters, digits, %%, |, _ or -", p.topic)
	}
	if p.group != "" && (len(p.group) > 255 || !namePattern.MatchString(p.group)) {
		return plan{}, fmt.Errorf("--group %q: want 1..255 letters, digits, %%, |, _ or -", p.group)
	}
	var err error
	if f.sqlSet || f.sql != "" {
		p.sql = true
		p.expr, err = sqlExpression(f.sql, f.tagSet)
	} else {
		p.expr, err = tagExpression(f.tag)
	}
	if err != nil {
		return plan{}, err
	}
	p.from, p.fromTime, err = parseFrom(f.from, now)
	if err != nil {
		return plan{}, err
	}
	p.fromText = strings.TrimSpace(f.from)
	if p.from == offset.ConsumeFromTimestamp {
		p.fromText = p.fromTime.Format(time.RFC3339)
	}
	switch f.format {
	case "text", "table": // runnelctl's word for it
	case "json":
		p.json = true
	default:
		return plan{}, fmt.Errorf("--output %q: want text or json", f.format)
	}
	if f.max < 0 {
		return plan{}, fmt.Errorf("--max %d: want 0 (no limit) or more", f.max)
	}
	if f.idleTimeout < 0 {
		return plan{}, fmt.Errorf("--idle-timeout %v: want 0 (none) or a positive duration", f.idleTimeout)
	}
	if p.logLevel, err = cliflag.LogLevel(f.logLevel); err != nil {
		return plan{}, err
	}
	return p, nil
}

// tagExpression normalises --tag: empty or "*" subscribes to everything;
// otherwise tags separated by "||", none of them empty.
func tagExpression(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "*" {
		return "*", nil
	}
	var tags []string
	for _, t := range strings.Split(s, "||") {
		t = strings.TrimSpace(t)
		if t == "" || t == "*" {
			return "", fmt.Errorf("--tag %q: want * or tags separated by ||, e.g. 'TagA || TagB'", s)
		}
		tags = append(tags, t)
	}
	return strings.Join(tags, " || "), nil
}

// sqlExpression checks --sql here, with the broker's own parser, so a
// typo is reported with its column before anything connects.
func sqlExpression(s string, tagSet bool) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case tagSet:
		return "", errors.New("--tag and --sql cannot be used together: a consumer subscribes with one expression; " +
			"filter tags in the SQL92 condition instead, e.g. --sql \"TAGS IN ('TagA', 'TagB') AND a > 5\"")
	case s == "":
		return "", errors.New("--sql is empty: want a SQL92 condition over message properties, e.g. \"a > 5 AND b = 'x'\"")
	}
	if _, err := sql92.Compile(s); err != nil {
		return "", fmt.Errorf("--sql %q: %w", s, err)
	}
	return s, nil
}

// timeLayouts are the accepted spellings of --from's point in time besides
// the numeric ones. Layouts without a zone are local time.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05",
	"2006-01-02T15:04",
	"2006-01-02",
}

// parseFrom reads --from: last, first, or a point in time given as a
// duration before now ("10m", "-10m"), milliseconds since the epoch,
// RocketMQ's yyyyMMddHHmmss (14 digits, local time), RFC 3339, or
// "2006-01-02 15:04:05" (local time).
func parseFrom(s string, now time.Time) (offset.ConsumeFrom, time.Time, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "last", "latest":
		return offset.ConsumeFromLastOffset, time.Time{}, nil
	case "first", "earliest":
		return offset.ConsumeFromFirstOffset, time.Time{}, nil
	case "":
		return 0, time.Time{}, errors.New("--from is empty: want last, first or a time")
	}
	if d, err := time.ParseDuration(strings.TrimPrefix(s, "-")); err == nil {
		if d <= 0 {
			return 0, time.Time{}, fmt.Errorf("--from %q: a duration must be positive", s)
		}
		return offset.ConsumeFromTimestamp, now.Add(-d), nil
	}
	if isDigits(s) {
		if len(s) == len(offset.TimestampLayout) {
			t, err := offset.ParseConsumeTimestamp(s, time.Local)
			if err != nil {
				return 0, time.Time{}, fmt.Errorf("--from %q: %w", s, err)
			}
			return offset.ConsumeFromTimestamp, t, nil
		}
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, time.Time{}, fmt.Errorf("--from %q: milliseconds out of range", s)
		}
		return offset.ConsumeFromTimestamp, time.UnixMilli(ms), nil
	}
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, s, time.Local); err == nil {
			return offset.ConsumeFromTimestamp, t, nil
		}
	}
	return 0, time.Time{}, fmt.Errorf("--from %q: want last, first, a duration ago (10m), "+
		"milliseconds since the epoch, yyyyMMddHHmmss, RFC 3339 or 2006-01-02 15:04:05", s)
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}
