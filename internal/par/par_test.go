package par

import (
	"context"
	"sync/atomic"
	"testing"
)

func TestForCallsEachIndexOnce(t *testing.T) {
	for _, workers := range []int{0, 1, 3, 64} {
		for _, n := range []int{0, 1, 5, 1000} {
			seen := make([]atomic.Int32, n)
			For(context.Background(), n, workers, func(i int) { seen[i].Add(1) })
			for i := range seen {
				if c := seen[i].Load(); c != 1 {
					t.Fatalf("workers %d, n %d: index %d called %d times", workers, n, i, c)
				}
			}
		}
	}
}

func TestForStopsWhenCancelled(t *testing.T) {
	const workers = 2
	ctx, cancel := context.WithCancel(context.Background())
	var calls, late atomic.Int32
	var cancelled atomic.Bool
	For(ctx, 1000, workers, func(i int) {
		if cancelled.Load() {
			late.Add(1)
		}
		if calls.Add(1) == 10 {
			// The worker may be preempted between the count and the
			// cancel, and the others go on meanwhile: only calls that
			// start after cancel has returned are bounded.
			cancel()
			cancelled.Store(true)
		}
	})
	// A worker that had already passed its check when the cancel came
	// makes one more call; the cancelling worker makes none.
	if l := late.Load(); l > workers-1 {
		t.Errorf("%d calls started after the cancel returned (%d in all), want at most %d", l, calls.Load(), workers-1)
	}
	if c := calls.Load(); c < 10 {
		t.Errorf("%d calls, want at least the 10 before the cancel", c)
	}
}
