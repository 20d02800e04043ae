package cmake

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// Hostile files stop at a limit, with FILE:LINE, in bounded time and
// memory; the recursion limit is cmake's own (cmake -P is the oracle).
func TestEvaluationLimits(t *testing.T) {
	cases := []struct {
		name, src string
		line      int
		want      string
		cmake     bool // cmake fails the same way
	}{
		{"function recursion", "function(f)\n  f()\nendfunction()\nf()\n", 2, "Maximum recursion depth of 1000 exceeded", true},
		{"macro recursion", "macro(m)\n  m()\nendmacro()\nm()\n", 2, "Maximum recursion depth of 1000 exceeded", true},
		{"doubling string", "set(x a)\nforeach(i RANGE 100)\n  set(x \"${x}${x}\")\nendforeach()\n", 3, "grows past 16 MiB", false},
		{"doubling list", "set(x a)\nforeach(i RANGE 100)\n  list(APPEND x ${x})\nendforeach()\n", 3, "grows past 16 MiB", false},
		{"string append", "set(x aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa)\nforeach(i RANGE 100)\n  string(APPEND x \"${x}\")\nendforeach()\n", 3, "grows past 16 MiB", false},
		{"replace bomb", "set(x aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa)\nforeach(i RANGE 20)\n  string(REPLACE a aaaaaaaaaaaaaaaa x \"${x}\")\nendforeach()\n", 3, "grows past 16 MiB", false},
		{"property append", "add_library(t STATIC IMPORTED)\nset(x aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa)\nforeach(i RANGE 30)\n  string(APPEND x \"${x}\")\n  set_property(TARGET t APPEND PROPERTY P ${x})\nendforeach()\n", 5, "grows past 16 MiB", false},
		{"long loop", "foreach(i RANGE 10000)\n  foreach(j RANGE 10000)\n    set(y ${j})\n  endforeach()\nendforeach()\n", 2, "more than the 1000000 commands", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "composable_kernelConfig.cmake")
			os.WriteFile(p, []byte(c.src), 0o644)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := New().EvalFile(p)
			runtime.ReadMemStats(&after)
			var le *LimitError
			if !errors.As(err, &le) || le.Line != c.line || !strings.Contains(err.Error(), c.want) || le.CMakeFails != c.cmake || !strings.HasPrefix(err.Error(), p+":") {
				t.Fatalf("err %v, want %s:%d: …%s… (cmake fails: %v)", err, p, c.line, c.want, c.cmake)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 1<<30 {
				t.Errorf("the evaluation allocated %d MiB", got>>20)
			}
			if !c.cmake {
				return
			}
			cmake := testenv.Tool(t, "cmake", "cmake")
			out, _ := exec.Command(cmake, "-P", p).CombinedOutput()
			if !strings.Contains(string(out), c.want) {
				t.Errorf("cmake -P does not fail the same way:\n%s", out)
			}
		})
	}
}

// FuzzEval evaluates arbitrary files within a small command budget: no
// panic, no runaway.
func FuzzEval(f *testing.F) {
	f.Add("function(f)\n  f()\nendfunction()\nf()\n")
	f.Add("set(x a)\nforeach(i RANGE 100)\n  set(x \"${x}${x}\")\nendforeach()\n")
	f.Add("include(${CMAKE_CURRENT_LIST_DIR}/x.cmake OPTIONAL)\nif(NOT x)\n message(FATAL_ERROR no)\nendif()\n")
	f.Add("add_library(ck::a STATIC IMPORTED)\nset_target_properties(ck::a PROPERTIES IMPORTED_LOCATION_RELEASE \"${_IMPORT_PREFIX}/lib/a.a\")\n")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, src string) {
		p := filepath.Join(dir, "Config.cmake")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		in := New()
		in.maxCommands = 20_000
		in.EvalFile(p)
	})
}
