package idempotency

// SetPurgeBatch makes Purge delete n keys per statement until the test ends.
func SetPurgeBatch(n int) (restore func()) {
	old := purgeBatch
	purgeBatch = n
	return func() { purgeBatch = old }
}
