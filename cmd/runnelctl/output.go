package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/runnelmq/runnel/internal/msgtext"
)

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeJSONList writes a list as writeJSON does, an empty one as [] (not
// null): a script reading the output may range over it either way.
func writeJSONList[T any](w io.Writer, list []T) error {
	if list == nil {
		list = []T{}
	}
	return writeJSON(w, list)
}

// printResult prints what a command fetched: err when the fetch failed,
// else v as JSON with -o json, else as table writes it.
func printResult[T any](a *app, v T, err error, table func(T) error) error {
	if err != nil {
		return err
	}
	if a.output == "json" {
		return writeJSON(a.stdout, v)
	}
	return table(v)
}

// printList writes list as a JSON array (writeJSONList) or as a table
// under header, one row of each item.
func printList[T any](a *app, list []T, header []string, row func(T) []any) error {
	if a.output == "json" {
		return writeJSONList(a.stdout, list)
	}
	t := newTable(a.stdout, header...)
	for _, x := range list {
		t.row(row(x)...)
	}
	return t.flush()
}

// table writes aligned columns.
type table struct {
	tw *tabwriter.Writer
}

func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	t.row(toAny(header)...)
	return t
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func (t *table) row(cells ...any) {
	for i, c := range cells {
		if i > 0 {
			fmt.Fprint(t.tw, "\t")
		}
		fmt.Fprint(t.tw, c)
	}
	fmt.Fprint(t.tw, "\n")
}

func (t *table) flush() error { return t.tw.Flush() }

// msTime renders a millisecond timestamp in RFC 3339 with milliseconds and
// the local zone (as the consumer does), "-" for 0.
func msTime(ms int64) string {
	if ms <= 0 {
		return "-"
	}
	return time.UnixMilli(ms).Format(rfc3339Milli)
}

const rfc3339Milli = "2006-01-02T15:04:05.000Z07:00"

// plural is "1 queue" or "2 queues".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// bodyText renders a body for a terminal: as is when it is text, else
// Go-escaped in quotes.
func bodyText(b []byte) string {
	if msgtext.IsText(b) {
		return string(b)
	}
	return fmt.Sprintf("%q", b)
}

// preview shortens s to n runes on one line for table cells.
func preview(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// dash renders empty strings as "-" in tables.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// jsonLine writes compact one-line JSON objects.
type jsonLine struct{ w io.Writer }

func (j jsonLine) write(v any) error { return json.NewEncoder(j.w).Encode(v) }
