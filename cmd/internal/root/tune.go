package root

import (
	"github.com/spf13/cobra"

	"github.com/rocmdoctor/rocmdoctor/internal/gcfloor"
	"github.com/rocmdoctor/rocmdoctor/internal/hugeheap"
)

// tune sets the process-wide memory tuning of the command about to run,
// the one place that does (docs/performance.md has the measurements).
// GOGC or GOMEMLIMIT set by the user win over every floor.
func tune(cmd *cobra.Command) {
	top := cmd
	for top.HasParent() && top.Parent().HasParent() {
		top = top.Parent()
	}
	switch top.Name() {
	case "check":
		if lr, _ := cmd.Flags().GetBool("list-rules"); lr {
			return
		}
		// A scan allocates and drops small headers by the thousand over a
		// live heap of a few MB: its heap is faulted in with 2 MiB pages,
		// and no collection runs until it reaches 192 MiB (none over
		// /usr/lib), then GOGC=400. hugeheap first: it needs no limit set.
		hugeheap.Prepare(128 << 20)
		gcfloor.Set(192<<20, 400)
	case "deps":
		// Resolving a prefix's closures (parallel workers) allocates tens
		// of MB of short-lived headers over a live heap of a few: the
		// collections an ordinary GOGC runs take a core from the workers.
		gcfloor.Set(64<<20, 100)
	}
}
