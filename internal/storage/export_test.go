package storage

// OnGroupCommit, when set, is told the size of each group the SQLite committer commits.
func OnGroupCommit(f func(n int)) { groupCommitted = f }
