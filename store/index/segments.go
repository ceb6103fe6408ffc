package index

import "github.com/cockroachdb/pebble/v2"

// Segments calls fn for each sealed segment in r, in log order, until fn
// returns false or an error.
func Segments(r pebble.Reader, fn func(start int64, d Dir) (bool, error)) error {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: []byte{DirPrefix}, UpperBound: []byte{DirPrefix + 1}})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		start, err := ParseDirKey(it.Key())
		if err != nil {
			_ = it.Close()
			return err
		}
		d, err := DecodeDir(it.Value())
		if err == nil {
			ok, err = fn(start, d)
		}
		if err != nil || !ok {
			_ = it.Close()
			return err
		}
	}
	return it.Close()
}

// DeleteSegments adds to b the deletion of every segment starting in
// [from, to): its directory key and its buckets.
func DeleteSegments(b *pebble.Batch, from, to int64) {
	_ = b.DeleteRange(DirKey(from), DirKey(to), nil)
	_ = b.DeleteRange(BucketKey(from, 0), BucketKey(to, 0), nil)
}
