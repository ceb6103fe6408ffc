package store

// tagSet is the tests' filter: messages whose tag hash is in the set. The
// broker's own filters live in broker/filter.
type tagSet map[int64]struct{}

func newTagSet(codes ...int64) tagSet {
	f := make(tagSet, len(codes))
	for _, c := range codes {
		f[c] = struct{}{}
	}
	return f
}

func (f tagSet) MatchTagsCode(code int64) bool {
	_, ok := f[code]
	return ok
}

func (f tagSet) MatchRecord([]byte) bool { return true }
