// Package gcfloor lets a short, allocation-heavy run leave its heap alone
// while it is small.
//
// check over /usr/lib/x86_64-linux-gnu allocates ~60 MB of short-lived
// headers and tables over a live heap of a few MB. With any ordinary GOGC
// one collection falls in the middle of the scan, and while it marks, the
// workers run with write barriers on and give up a core to it: a seventh
// of the run's wall time. A GOGC high enough to skip it would let a large
// scan's heap grow to thirty times its live data, so Set combines the two
// the way the Go GC guide suggests: the collector is off until the heap
// reaches a floor (a memory limit), and from the first collection that
// finds the live data too large for the floor, GOGC takes over as usual.
// Memory stays bounded by the floor or by GOGC, whichever is larger.
package gcfloor

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

var once sync.Once

// Set keeps collections away until the heap reaches floor bytes, then
// collects as with GOGC=percent once percent's goal for the live data
// exceeds the floor. It does nothing when the user set GOGC or GOMEMLIMIT
// (theirs win) and only the first call in a process counts. It reports
// whether it took effect.
func Set(floor int64, percent int) (ok bool) {
	once.Do(func() {
		if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" || floor <= 0 || percent <= 0 {
			return
		}
		ok = true
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(floor)
		watch(floor, percent)
	})
	return ok
}

// watch looks at the live heap after every collection (a finalizer runs
// once per cycle in which its object was found dead) and hands over to
// GOGC when the floor no longer leaves room for percent of growth.
func watch(floor int64, percent int) {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		if live := liveHeap(); live > 0 && live+live*int64(percent)/100 >= floor {
			debug.SetGCPercent(percent)
			debug.SetMemoryLimit(math.MaxInt64)
			return
		}
		watch(floor, percent)
	})
}

// sentinel holds a pointer so that it is never a tiny allocation sharing
// its block (and its finalizer's timing) with other objects.
type sentinel struct{ _ *byte }

// liveHeap is the heap the last collection marked live, 0 when unknown.
// Not runtime.MemStats.HeapAlloc, though runtime/metrics' initialiser
// costs every command start-up time: read in the finalizer, HeapAlloc still
// counts the garbage not yet swept, and a floor over little live data was
// lifted (TestFloorStaysOverSmallHeap).
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	v := s[0].Value.Uint64()
	if v > math.MaxInt64 {
		return 0
	}
	return int64(v)
}
