package symcheck

import (
	"context"

	"github.com/rocmdoctor/rocmdoctor/elfx"
)

// WithLimits returns o with the table cache's budget and the size up to
// which wheel members are read into memory lowered (0 keeps a default).
func WithLimits(o CheckOptions, tableBudget int, inMemory uint64) CheckOptions {
	o.tableBudget, o.inMemory = tableBudget, inMemory
	return o
}

// OnTableRead has fn called with every file whose symbol table is read,
// until the returned function is called.
func OnTableRead(fn func(f *elfx.File)) (restore func()) {
	tableRead = fn
	return func() { tableRead = nil }
}

// OnScanParse has fn called with every file check parses when the scan
// reaches it, until the returned function is called.
func OnScanParse(fn func(path string)) (restore func()) {
	scanParsed = fn
	return func() { scanParsed = nil }
}

// CheckLinkInputsOnly is CheckLinkInputs for the names that start with only.
func CheckLinkInputsOnly(ctx context.Context, paths []string, only string) (*StaticResult, error) {
	return checkLinkInputs(ctx, paths, only)
}

// LLVMName is llvmName: whether a run of NUL-terminated index names holds
// one LLVM or MLIR code defines.
var LLVMName = llvmName

// WatchHashing counts the wheel members hashed at once, until the returned
// function, which reports the most at a time, is called.
func WatchHashing() (peak func() int) {
	hashSlots.peak.Store(0)
	hashSlots.watch = true
	return func() int {
		hashSlots.watch = false
		return int(hashSlots.peak.Load())
	}
}
