package elfx

// MapAlways makes MappedSymbolTable map every file, however small its
// tables, until the returned function is called.
func MapAlways() (restore func()) {
	old := smallTables
	smallTables = 0
	return func() { smallTables = old }
}

// Mapped reports whether the table reads a mapping of its file.
func (t *SymbolTable) Mapped() bool { return t.m != nil }

// TinyDynamicReads makes the reads of GNU hash chains and version tables
// found through the dynamic segment start at one entry and one byte, so
// that every table takes the reads that grow, until restore is called.
func TinyDynamicReads() (restore func()) {
	c, v := chainReadStart, versionReadStart
	chainReadStart, versionReadStart = 1, 1
	return func() { chainReadStart, versionReadStart = c, v }
}
