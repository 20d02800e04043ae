package check

import "github.com/rocmdoctor/rocmdoctor/elfx"

// WithLimits returns o with the table cache's budget and the size up to
// which wheel members are read into memory lowered (0 keeps a default).
func WithLimits(o Options, tableBudget int, inMemory uint64) Options {
	o.tableBudget, o.inMemory = tableBudget, inMemory
	return o
}

// WithHooks returns o calling tableRead (when not nil) with every file
// whose symbol table is read, and scanParsed with every file the scan
// parses when it reaches it.
func WithHooks(o Options, tableRead func(f *elfx.File), scanParsed func(path string)) Options {
	o.tableRead, o.scanParsed = tableRead, scanParsed
	return o
}

// WatchHashing starts counting anew the most wheel members hashed at
// once, which the returned function reports.
func WatchHashing() (peak func() int) {
	hashSlots.peak.Store(0)
	return func() int { return int(hashSlots.peak.Load()) }
}
