package symcheck

// SetTableCacheBudget changes the budget of TableCaches made from now on,
// until the returned function is called.
func SetTableCacheBudget(n int) (restore func()) {
	old := tableCacheBudget
	tableCacheBudget = n
	return func() { tableCacheBudget = old }
}
