package jobs

// SetJobListPage makes JobsWithArg read n jobs per query until the test ends.
func SetJobListPage(n int) (restore func()) {
	old := jobListPage
	jobListPage = n
	return func() { jobListPage = old }
}
