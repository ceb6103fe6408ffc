package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/runnelmq/runnel/client/admin"
	"github.com/spf13/pflag"
)

// timeLayouts are the accepted spellings of a point in time, besides
// milliseconds since the epoch. Layouts without a zone are local time.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05",
	"2006-01-02#15:04:05.000", // mqadmin's format, once its last ':' is a '.'
	"2006-01-02T15:04",
	"2006-01-02",
}

// parseTime reads a time argument: "now", a duration before now ("15m",
// "-15m", as the consumer's --from), milliseconds since the epoch,
// RFC 3339, "2006-01-02 15:04:05" (local), mqadmin's
// "2006-01-02#15:04:05:000", or a date.
func parseTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "now") {
		return now, nil
	}
	if d, err := time.ParseDuration(strings.TrimPrefix(s, "-")); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("time %q: a duration must be positive", s)
		}
		return now.Add(-d), nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms < 0 {
			return time.Time{}, fmt.Errorf("time %q is negative", s)
		}
		return time.UnixMilli(ms), nil
	}
	if i := strings.LastIndexByte(s, ':'); strings.Contains(s, "#") && i > 0 && len(s)-i == 4 {
		// mqadmin writes milliseconds after a colon, which Go's layouts
		// cannot express.
		s = s[:i] + "." + s[i+1:]
	}
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("time %q: want now, a duration ago (15m), milliseconds since the epoch, RFC 3339 (2006-01-02T15:04:05Z07:00), 2006-01-02 15:04:05 or 2006-01-02#15:04:05:000", s)
}

// parseResetTarget reads --to: earliest, latest, or a time.
func parseResetTarget(s string, now time.Time) (admin.ResetTarget, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "earliest", "first", "oldest":
		return admin.ResetTarget{Position: admin.ResetToEarliest}, nil
	case "latest", "last", "newest":
		return admin.ResetTarget{Position: admin.ResetToLatest}, nil
	case "":
		return admin.ResetTarget{}, fmt.Errorf("--to is empty: want earliest, latest or a time")
	}
	t, err := parseTime(s, now)
	if err != nil {
		return admin.ResetTarget{}, fmt.Errorf("--to: %w", err)
	}
	return admin.ResetTarget{Position: admin.ResetToTime, Time: t}, nil
}

// timeRange is --begin and --end: store-time bounds in parseTime's forms,
// none when empty.
type timeRange struct{ begin, end string }

func (r *timeRange) register(fs *pflag.FlagSet, begin, end string) {
	fs.StringVar(&r.begin, "begin", "", begin)
	fs.StringVar(&r.end, "end", "", end)
}

// parse returns the bounds; a zero time is no bound.
func (r timeRange) parse(now time.Time) (begin, end time.Time, err error) {
	for _, t := range []struct {
		name, arg string
		to        *time.Time
	}{{"--begin", r.begin, &begin}, {"--end", r.end, &end}} {
		if t.arg == "" {
			continue
		}
		if *t.to, err = parseTime(t.arg, now); err != nil {
			return begin, end, fmt.Errorf("%s: %w", t.name, err)
		}
	}
	return begin, end, nil
}
