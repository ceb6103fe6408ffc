package console

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"testing"
)

func TestPaginateSearchesSortsAndCutsPages(t *testing.T) {
	var rows []int
	for i := range 95 {
		rows = append(rows, i)
	}
	cols := map[string]column[int]{"n": func(a, b int) int { return cmp.Compare(a, b) }}
	q := parseList(url.Values{"q": {"1"}, "sort": {"n"}, "desc": {"1"}, "page": {"2"}, "size": {"5"}}, "n", 50)
	p := paginate(rows, q, func(i int) bool { return contains(fmt.Sprint(i), q.Q) }, cols, cols["n"])
	// 1, 10..19, 21, 31, ..., 91: 19 rows; descending; the second page of 5.
	if p.Total != 19 || p.All != 95 || p.Pages != 4 || !slices.Equal(p.Rows, []int{41, 31, 21, 19, 18}) {
		t.Fatalf("page %+v", p)
	}
	if !p.HasPrev() || !p.HasNext() || p.First() != 6 || p.Last() != 10 {
		t.Fatalf("controls: prev %v next %v %d-%d", p.HasPrev(), p.HasNext(), p.First(), p.Last())
	}
	// A page past the end shows the last; the sort link turns the order.
	q.Page = 99
	if p := paginate(rows, q, func(int) bool { return true }, cols, cols["n"]); p.Query.Page != 19 || len(p.Rows) != 5 {
		t.Fatalf("past the end: page %d, %d rows", p.Query.Page, len(p.Rows))
	}
	if link := q.SortLink("n"); link != "?q=1&sort=n" {
		t.Fatalf("sort link of the sorted column, descending: %s", link)
	}
	if q2 := parseList(url.Values{"size": {"100000"}}, "n", 50); q2.Size != maxPageSize {
		t.Fatalf("size not bounded: %d", q2.Size)
	}
}

func TestPickTurnsTheBudgetOverTheList(t *testing.T) {
	g := &gatherer{}
	all := []string{"a", "b", "c", "d", "e"}
	if got, full := g.pick(all, nil, 10, new(int)); !full || len(got) != 5 {
		t.Fatalf("under the budget: %v %v", got, full)
	}
	cursor := 0
	seen := map[string]int{}
	for range 5 {
		got, full := g.pick(all, []string{"e"}, 2, &cursor)
		if full || len(got) != 2 || got[0] != "e" {
			t.Fatalf("viewed first: %v", got)
		}
		for _, n := range got {
			seen[n]++
		}
	}
	for _, n := range all {
		if seen[n] == 0 {
			t.Fatalf("%s never sampled in 5 rounds: %v", n, seen)
		}
	}
}
