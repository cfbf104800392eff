package memory

// DSN returns the connection string of the handler's database; path is
// where the database file would go.
func DSN(path string) string {
	return "file::memory:?_pragma=foreign_keys(1)&_pragma=busy_timeout(5000)&_txlock=immediate"
}
