// Package par runs the iterations of a loop on every core.
package par

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls fn(i) for every i in [0, n) on up to workers goroutines
// (GOMAXPROCS when workers <= 0), each taking the next index as it
// finishes one, so slow items do not hold up a share of the others. It
// returns when every call has returned. Once ctx is done no further call
// starts; the caller tells a partial result by ctx.Err(). Results go in
// slots indexed by i: the order of the calls is not the order of i.
func For(ctx context.Context, n, workers int, fn func(i int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}
