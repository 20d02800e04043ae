package wheel

import (
	"os"
	"time"

	"github.com/rocmdoctor/rocmdoctor/internal/writeback"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
)

// tuning holds the thresholds of a relink and the calls it makes to the
// system where tests need other ones (Options.tuning, set through
// export_test.go; nil is defaultTuning).
type tuning struct {
	// freeSpace reads the free space of a directory's file system.
	freeSpace func(dir string) (uint64, bool)
	// syncFile is the fsync of the output.
	syncFile func(*os.File) error
	// outputBase is where the new archive begins in its file (a sparse
	// hole before it), so that tests get entries past 4 GiB without
	// writing 4 GiB.
	outputBase int64
	// predictMin is the compressed size of a member from which its edits
	// are predicted (predict.go); holeMin is the smallest hole worth
	// leaving, holeMargin keeps it that far inside its run of sections (no
	// deflate block that an edit outside the section changes reaches that
	// far into it).
	predictMin, holeMin, holeMargin int64
	// holdStaging makes the writing of a member wait (that long at most)
	// for its prediction after the first buffer: a test library is
	// inflated faster than it is predicted.
	holdStaging time.Duration
	// tamperPlan, tamperHashed and tamperHole alter a prediction: its plan
	// before it is compared with the real edit's, the bytes it hashes (at
	// offset off of the edited file), the hole it leaves.
	tamperPlan   func(*patchelf.Plan)
	tamperHashed func(off int64, b []byte)
	tamperHole   func([2]int64) [2]int64
}

var defaultTuning = tuning{
	freeSpace:  writeback.Free,
	syncFile:   (*os.File).Sync,
	predictMin: 16 << 20,
	holeMin:    16 << 20,
	holeMargin: 4 << 20,
}

// tune is the relink's tuning.
func (o *Options) tune() *tuning {
	if o.tuning != nil {
		return o.tuning
	}
	return &defaultTuning
}
