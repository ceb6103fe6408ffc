package console

import (
	"cmp"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// listQuery is how a list page is searched, sorted and paged: the query
// string's q, sort, desc, page and size.
type listQuery struct {
	Q    string `json:"q"`
	Sort string `json:"sort"`
	Desc bool   `json:"desc"`
	Page int    `json:"page"` // from 1
	Size int    `json:"size"`
	// System shows system topics and groups too.
	System bool `json:"system"`
}

// maxPageSize bounds the rows one page may ask for.
const maxPageSize = 1000

func parseList(v url.Values, defSort string, defSize int) listQuery {
	q := listQuery{Q: strings.TrimSpace(v.Get("q")), Sort: v.Get("sort"), Desc: v.Get("desc") == "1",
		System: v.Get("system") == "1", Page: 1, Size: defSize}
	if q.Sort == "" {
		q.Sort = defSort
	}
	if p, err := strconv.Atoi(v.Get("page")); err == nil && p > 0 {
		q.Page = p
	}
	if s, err := strconv.Atoi(v.Get("size")); err == nil && s > 0 {
		q.Size = min(s, maxPageSize)
	}
	return q
}

// with returns the query string of q changed by kv pairs (a link to
// another page, another sort).
func (q listQuery) with(kv ...string) string {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" && val != "0" {
			v.Set(k, val)
		}
	}
	set("q", q.Q)
	set("sort", q.Sort)
	if q.Desc {
		v.Set("desc", "1")
	}
	if q.System {
		v.Set("system", "1")
	}
	if q.Page > 1 {
		set("page", strconv.Itoa(q.Page))
	}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Del(kv[i])
		set(kv[i], kv[i+1])
	}
	return "?" + v.Encode()
}

// SortLink is the query string that sorts by col: the other way round when
// it is the current sort. Templates use it in column headers.
func (q listQuery) SortLink(col string) string {
	desc := "0"
	if q.Sort == col && !q.Desc {
		desc = "1"
	}
	return q.with("sort", col, "desc", desc, "page", "0")
}

// Arrow marks the sorted column.
func (q listQuery) Arrow(col string) string {
	switch {
	case q.Sort != col:
		return ""
	case q.Desc:
		return " ▼"
	}
	return " ▲"
}

// PageLink is the query string of page p.
func (q listQuery) PageLink(p int) string { return q.with("page", strconv.Itoa(p)) }

// ToggleSystem is the query string with the system switch flipped.
func (q listQuery) ToggleSystem() string {
	v := "1"
	if q.System {
		v = "0"
	}
	return q.with("system", v, "page", "0")
}

// page is one page of a list, with what it takes to draw the controls.
type page[T any] struct {
	Rows  []T       `json:"rows"`
	Total int       `json:"total"` // rows matching the search
	All   int       `json:"all"`   // rows before the search
	Query listQuery `json:"query"`
	Pages int       `json:"pages"`
}

// HasPrev and HasNext say whether there are pages before and after.
func (p page[T]) HasPrev() bool { return p.Query.Page > 1 }
func (p page[T]) HasNext() bool { return p.Query.Page < p.Pages }
func (p page[T]) Prev() int     { return p.Query.Page - 1 }
func (p page[T]) Next() int     { return p.Query.Page + 1 }
func (p page[T]) First() int    { return (p.Query.Page-1)*p.Query.Size + 1 }
func (p page[T]) Last() int     { return (p.Query.Page-1)*p.Query.Size + len(p.Rows) }

// column sorts rows by one field.
type column[T any] func(a, b T) int

// paginate filters rows by keep, sorts them by q.Sort (cols names the
// sortable columns; ties go by the first), and cuts q's page. The input
// slice is not changed.
func paginate[T any](rows []T, q listQuery, keep func(T) bool, cols map[string]column[T], tie column[T]) page[T] {
	out := page[T]{All: len(rows), Query: q}
	matched := make([]T, 0, len(rows))
	for _, r := range rows {
		if keep(r) {
			matched = append(matched, r)
		}
	}
	col, ok := cols[q.Sort]
	if !ok {
		col = tie
	}
	slices.SortStableFunc(matched, func(a, b T) int {
		c := col(a, b)
		if q.Desc {
			c = -c
		}
		return cmp.Or(c, tie(a, b))
	})
	out.Total = len(matched)
	out.Pages = max(1, (len(matched)+q.Size-1)/q.Size)
	if out.Query.Page > out.Pages {
		out.Query.Page = out.Pages
	}
	lo := min((out.Query.Page-1)*q.Size, len(matched))
	hi := min(lo+q.Size, len(matched))
	out.Rows = matched[lo:hi]
	return out
}

// figuredPage is paginate, ties broken by name, for a list with figures
// read from the samples (rates, lags): fill puts them in the rows of the
// page only, or in every row when the list sorts by one of figures. It
// also returns the names on the page, which the gatherer samples next.
func figuredPage[T any](rows []T, q listQuery, figures []string, fill func([]T), keep func(T) bool, cols map[string]column[T], name func(T) string) (page[T], []string) {
	byFigure := slices.Contains(figures, q.Sort)
	if byFigure {
		fill(rows)
	}
	p := paginate(rows, q, keep, cols, cols["name"])
	if !byFigure {
		fill(p.Rows)
	}
	names := make([]string, len(p.Rows))
	for i, r := range p.Rows {
		names[i] = name(r)
	}
	return p, names
}

// contains is the search: every word of q appears in s, ignoring case.
func contains(s, q string) bool {
	if q == "" {
		return true
	}
	s = strings.ToLower(s)
	for _, w := range strings.Fields(strings.ToLower(q)) {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}
