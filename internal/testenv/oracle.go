package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GCCDir is a scratch directory for a test that builds with gcc: write
// puts a file in it, run runs gcc in it and fails the test on an error.
func GCCDir(t *testing.T) (dir string, write func(name, content string), run func(args ...string)) {
	t.Helper()
	gcc := Tool(t, "gcc", "gcc")
	dir = t.TempDir()
	write = func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run = func(args ...string) {
		t.Helper()
		cmd := exec.Command(gcc, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	return dir, write, run
}

// UnwindBindings loads file with the dlopen harness under LD_DEBUG=bindings
// and LD_BIND_NOW and returns the objects the references to the unwinding
// ABI's entry points bind to (libgcc_s also binds its own
// _Unwind_Find_FDE, which libunwind does not define, to itself), with the
// loader's output.
func UnwindBindings(harness, file string) (map[string]bool, string, error) {
	cmd := exec.Command(harness, file)
	cmd.Env = append(os.Environ(), "LD_DEBUG=bindings", "LD_BIND_NOW=1")
	out, err := cmd.CombinedOutput()
	providers := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.Contains(line, "symbol `_Unwind_RaiseException'") && !strings.Contains(line, "symbol `_Unwind_Resume'") {
			continue
		}
		// "binding file A [0] to B [0]: normal symbol `_Unwind_Resume' [GCC_3.0]"
		if _, rest, ok := strings.Cut(line, " to "); ok {
			providers[strings.Fields(rest)[0]] = true
		}
	}
	return providers, string(out), err
}
