package symbols_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
	"github.com/rocmdoctor/rocmdoctor/internal/golden"
)

const td = "../../../testdata/"

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	io, _, out, errOut := cli.Test()
	code := root.Run(io, args)
	return code, out.String(), errOut.String()
}

func TestSymbolsSeedCaseGolden(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"miopen-index", []string{"symbols", "--index", td + "llvm", td + "libMIOpen.so"}},
		{"rock-archive", []string{"symbols", td + "librockCompiler.a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(t, tt.args...)
			if code != cli.ExitFindings {
				t.Errorf("exit %d, want 3 (stderr %q)", code, errOut)
			}
			golden.Assert(t, "symbols-"+tt.name+".txt", []byte(out))
			code, out, _ = run(t, append([]string{tt.args[0], "--json"}, tt.args[1:]...)...)
			if code != cli.ExitFindings {
				t.Errorf("--json exit %d", code)
			}
			golden.Assert(t, "symbols-"+tt.name+".json", []byte(out))
		})
	}
}

func TestSymbolsFlags(t *testing.T) {
	code, out, _ := run(t, "symbols", "--json", "--filter", "*AsmP*", "--fail-on", "never", td+"librockCompiler.a")
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
	_, out, _ = run(t, "symbols", "--demangle=false", td+"librockCompiler.a")
	if strings.Contains(out, "DEMANGLED") {
		t.Errorf("--demangle=false still shows the column")
	}
	for _, args := range [][]string{{"symbols"}, {"symbols", "--fail-on", "x", td + "libgnu.a"}} {
		if code, _, _ := run(t, args...); code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, _, errOut := run(t, "symbols", td+"src/foo.c"); code != cli.ExitError || !strings.Contains(errOut, "foo.c: not an ELF file") {
		t.Errorf("non-ELF: exit %d %q", code, errOut)
	}
}
