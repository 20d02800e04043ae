package wheel

import (
	"os"
	"time"

	"github.com/rocmdoctor/rocmdoctor/patchelf"
)

// SetSync replaces the fsync of the output wheel and the size from which
// the copied entries are fsynced early, until the returned func is called.
func SetSync(sync func(*os.File) error, early int64) (restore func()) {
	oldSync, oldMin := syncFile, earlyFlushMin
	syncFile, earlyFlushMin = sync, early
	return func() { syncFile, earlyFlushMin = oldSync, oldMin }
}

// SetOutputBase makes relinked wheels begin n bytes into their file (a
// hole before them), until the returned func is called.
func SetOutputBase(n int64) (restore func()) {
	old := outputBase
	outputBase = n
	return func() { outputBase = old }
}

// SetFreeSpace replaces how the free space where libraries are staged is
// read, until the returned func is called.
func SetFreeSpace(free func(dir string) (uint64, bool)) (restore func()) {
	old := freeSpace
	freeSpace = free
	return func() { freeSpace = old }
}

// SetPredict sets the compressed size from which a member's edits are
// predicted while it is inflated, and the smallest hole and its margin
// (predict.go), until the returned func is called.
// Staging waits up to 10 s for the prediction after the first buffer.
func SetPredict(min, hole, margin int64) (restore func()) {
	a, b, c, d := predictMin, holeMin, holeMargin, holdStaging
	predictMin, holeMin, holeMargin, holdStaging = min, hole, margin, 10*time.Second
	return func() { predictMin, holeMin, holeMargin, holdStaging = a, b, c, d }
}

// Predictions is how many RECORD digests came from predictions, how many
// scratch copies were left with a hole and how many holes were filled.
func Predictions() (used, holes, filled int64) {
	return predictionsUsed.Load(), holesLeft.Load(), holesFilled.Load()
}

// SetTamper alters predictions (see tamperPlan, tamperHashed, tamperHole)
// until the returned func is called.
func SetTamper(plan func(*patchelf.Plan), hashed func(int64, []byte), hole func([2]int64) [2]int64) (restore func()) {
	tamperPlan, tamperHashed, tamperHole = plan, hashed, hole
	return func() { tamperPlan, tamperHashed, tamperHole = nil, nil, nil }
}
