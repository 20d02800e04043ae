package symbols_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/clitest"
	"github.com/rocmdoctor/rocmdoctor/internal/golden"
)

const td = clitest.Testdata

func TestSymbolsSeedCaseGolden(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"miopen-index", []string{"symbols", "--index", td + "llvm", td + "libMIOpen.so"}},
		{"rock-archive", []string{"symbols", td + "librockCompiler.a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := clitest.Run(tt.args...)
			if code != cli.ExitFindings {
				t.Errorf("exit %d, want 3 (stderr %q)", code, errOut)
			}
			golden.Assert(t, "symbols-"+tt.name+".txt", []byte(out))
			code, out, _ = clitest.Run(append([]string{tt.args[0], "--json"}, tt.args[1:]...)...)
			if code != cli.ExitFindings {
				t.Errorf("--json exit %d", code)
			}
			golden.Assert(t, "symbols-"+tt.name+".json", []byte(out))
		})
	}
}

func TestSymbolsFlags(t *testing.T) {
	code, out, _ := clitest.Run("symbols", "--json", "--filter", "*AsmP*", "--fail-on", "never", td+"librockCompiler.a")
	if code != 0 {
		t.Errorf("--fail-on never: exit %d", code)
	}
	var rep struct {
		SchemaVersion int `json:"schema_version"`
		Findings      []struct{ Symbol string }
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.SchemaVersion != 1 || len(rep.Findings) != 2 {
		t.Errorf("filtered findings = %+v", rep.Findings)
	}
	_, out, _ = clitest.Run("symbols", "--demangle=false", td+"librockCompiler.a")
	if strings.Contains(out, "DEMANGLED") {
		t.Errorf("--demangle=false still shows the column")
	}
	for _, args := range [][]string{{"symbols"}, {"symbols", "--fail-on", "x", td + "libgnu.a"},
		{"symbols", "--host", td + "hello", td + "libfoo.so.1", td + "libbe.so"}} {
		if code, _, _ := clitest.Run(args...); code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, _, errOut := clitest.Run("symbols", td+"src/foo.c"); code != cli.ExitError || !strings.Contains(errOut, "foo.c: not an ELF file") {
		t.Errorf("non-ELF: exit %d %q", code, errOut)
	}
	// --host with an archive: not something a program loads.
	if code, _, errOut := clitest.Run("symbols", "--host", td+"hello", td+"libgnu.a"); code != cli.ExitError || !strings.Contains(errOut, "give one shared object") {
		t.Errorf("--host with an archive: exit %d %q", code, errOut)
	}
	// The fixture library in the fixture program: everything binds.
	if code, out, errOut := clitest.Run("symbols", "--host", td+"hello", td+"libfoo.so.1"); code != 0 || !strings.Contains(out, "0 finding(s)") {
		t.Errorf("--host: exit %d %q\n%s", code, errOut, out)
	}
}

// With --root, an absolute FILE is the file inside the sysroot, as deps
// takes it and as the resolver takes every path it finds.
func TestSymbolsFileInRoot(t *testing.T) {
	root, inside := clitest.InSysroot(t, "libMIOpen.so", "usr/lib/libMIOpen.so")
	code, out, errOut := clitest.Run("symbols", "--root", root, "--fail-on", "never", "--json", "/usr/lib/libMIOpen.so")
	if code != 0 || !strings.Contains(out, inside) {
		t.Errorf("exit %d, stderr %q; want a report on %s:\n%s", code, errOut, inside, out)
	}
}
