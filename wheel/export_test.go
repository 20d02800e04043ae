package wheel

import (
	"os"
	"time"

	"github.com/rocmdoctor/rocmdoctor/patchelf"
)

// Tuning is what a test changes of a relink; zero fields keep the
// defaults.
type Tuning struct {
	// Sync replaces the output's fsync.
	Sync func(*os.File) error
	// OutputBase makes the wheel begin that far into its file (a hole
	// before it).
	OutputBase int64
	// FreeSpace replaces how free space is read.
	FreeSpace func(dir string) (uint64, bool)
	// Predict: the compressed size from which a member's edits are
	// predicted, the smallest hole and its margin; staging then waits up
	// to 10 s for the prediction after the first buffer.
	PredictMin, HoleMin, HoleMargin int64
	// Tamper* alter predictions (see tuning).
	TamperPlan   func(*patchelf.Plan)
	TamperHashed func(int64, []byte)
	TamperHole   func([2]int64) [2]int64
}

// WithTuning returns o with t's changes to the defaults.
func WithTuning(o Options, t Tuning) Options {
	tu := defaultTuning
	if t.Sync != nil {
		tu.syncFile = t.Sync
	}
	tu.outputBase = t.OutputBase
	if t.FreeSpace != nil {
		tu.freeSpace = t.FreeSpace
	}
	if t.PredictMin != 0 {
		tu.predictMin, tu.holeMin, tu.holeMargin, tu.holdStaging = t.PredictMin, t.HoleMin, t.HoleMargin, 10*time.Second
	}
	tu.tamperPlan, tu.tamperHashed, tu.tamperHole = t.TamperPlan, t.TamperHashed, t.TamperHole
	o.tuning = &tu
	return o
}

// Predictions is how many RECORD digests came from predictions, how many
// scratch copies were left with a hole and how many holes were filled.
func Predictions() (used, holes, filled int64) {
	return predictionsUsed.Load(), holesLeft.Load(), holesFilled.Load()
}
