package gcfloor

import (
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// The settings are the process's, so each case runs in a child process.
func TestMain(m *testing.M) {
	switch os.Getenv("GCFLOOR_CHILD") {
	case "floor":
		os.Exit(childFloor())
	case "small":
		os.Exit(childSmall())
	case "user":
		if Set(64<<20, 100) {
			os.Exit(3) // GOGC was set: it must not take effect
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runChild(t *testing.T, mode string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"GCFLOOR_CHILD=" + mode}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", mode, err, out)
	}
}

var sink [][]byte

func garbage(n int) {
	for i := 0; i < n>>12; i++ {
		sink = append(sink[:0], make([]byte, 4096))
	}
}

func childFloor() int {
	var st runtime.MemStats
	if !Set(96<<20, 100) {
		return 2
	}
	runtime.ReadMemStats(&st)
	before := st.NumGC
	garbage(48 << 20) // well under the floor: no collection
	runtime.ReadMemStats(&st)
	if st.NumGC != before {
		println("collected", st.NumGC-before, "times under the floor")
		return 4
	}
	// 60 MB live: GOGC=100 wants 120 MB, more than the floor, so the
	// next collection hands over to GOGC.
	live := make([][]byte, 0, 60<<8)
	for range 60 << 8 {
		live = append(live, make([]byte, 4096))
	}
	garbage(64 << 20)
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) != math.MaxInt64 {
		if time.Now().After(deadline) {
			println("the floor was never lifted")
			return 5
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if p := debug.SetGCPercent(100); p != 100 {
		println("GOGC after the floor:", p)
		return 6
	}
	runtime.KeepAlive(live)
	return 0
}

// childSmall collects over little live data: the floor stays (GOGC=100
// would want far less than it). The collections are the test's own, with
// nothing allocating while they mark: one the limit starts under load
// counts what is allocated during its mark as live (up to the floor
// itself), which lifts it early; harmless (GOGC then bounds the heap),
// but not what this tests.
func childSmall() int {
	var st runtime.MemStats
	if !Set(256<<20, 100) {
		return 2
	}
	garbage(64 << 20) // under the floor: no collection of the limit's
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizer runs
	}
	runtime.ReadMemStats(&st)
	if st.NumGC < 3 {
		println("only", st.NumGC, "collections")
		return 3
	}
	if debug.SetMemoryLimit(-1) == math.MaxInt64 {
		println("the floor was lifted over", st.HeapAlloc>>20, "MB")
		return 4
	}
	return 0
}

func TestFloorThenGOGC(t *testing.T) { runChild(t, "floor") }

func TestFloorStaysOverSmallHeap(t *testing.T) { runChild(t, "small") }

func TestUserSettingsWin(t *testing.T) {
	runChild(t, "user", "GOGC=200")
	runChild(t, "user", "GOMEMLIMIT=1GiB")
}
