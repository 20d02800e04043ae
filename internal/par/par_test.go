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
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	For(ctx, 1000, 2, func(i int) {
		if calls.Add(1) == 10 {
			cancel()
		}
	})
	// Each worker may finish the call it is in after the cancel.
	if c := calls.Load(); c < 10 || c > 12 {
		t.Errorf("%d calls after cancelling at the 10th", c)
	}
}
