package longpoll

// Offsets returns the offsets of the requests parked on k, in parking
// order (for tests and diagnostics).
func (t *Table) Offsets(k Key) []int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]int64, 0, len(t.mu.byKey[k]))
	for _, r := range t.mu.byKey[k] {
		out = append(out, r.Offset)
	}
	return out
}
