package symcheck

import (
	"context"

	"github.com/rocmdoctor/rocmdoctor/elfx"
)

// SetTableCacheBudget changes the budget of TableCaches made from now on,
// until the returned function is called.
func SetTableCacheBudget(n int) (restore func()) {
	old := tableCacheBudget
	tableCacheBudget = n
	return func() { tableCacheBudget = old }
}

// SetInMemoryMember changes the size up to which check reads a wheel's ELF
// member into memory, until the returned function is called.
func SetInMemoryMember(n uint64) (restore func()) {
	old := inMemoryMember
	inMemoryMember = n
	return func() { inMemoryMember = old }
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
