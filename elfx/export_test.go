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
