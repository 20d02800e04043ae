package check_test

import (
	"archive/zip"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/check"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// cupyLikeWheel builds a wheel (and the same tree unpacked) whose extension
// module NEEDs the wheel's own libhelper.so.1 through $ORIGIN, takes the Py*
// API from the interpreter, and calls helper_v2, which libhelper lacks; the
// helper NEEDs libgone.so.1, which no system has. It returns the wheel and
// the unpacked directory.
func cupyLikeWheel(t *testing.T) (whl, tree, goneDir string) {
	t.Helper()
	p := testenv.NewPrefix(t)
	libs := filepath.Join(p.Root, "cupy_like", ".libs")
	os.MkdirAll(libs, 0o755)
	gone := p.Lib("build/libgone.so.1", "libgone.so.1", "int gone(void) { return 1; }\n")
	p.Lib("cupy_like/.libs/libhelper.so.1", "libhelper.so.1", "extern int gone(void); int helper(void) { return gone(); }\n",
		"-L"+filepath.Dir(gone), "-l:libgone.so.1")
	p.Lib("cupy_like/_ext.cpython-311-x86_64-linux-gnu.so", "", "extern int helper(void), helper_v2(void); extern void *PyLong_FromLong(long);\n"+
		"void *f(void) { return PyLong_FromLong(helper() + helper_v2()); }\n",
		"-L"+libs, "-l:libhelper.so.1", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/.libs")
	goneDir = t.TempDir()
	os.Rename(gone, filepath.Join(goneDir, "libgone.so.1"))
	os.RemoveAll(filepath.Join(p.Root, "build"))
	var members [][2]string
	for _, rel := range []string{"cupy_like/__init__.py", "cupy_like/.libs/libhelper.so.1", "cupy_like/_ext.cpython-311-x86_64-linux-gnu.so"} {
		if rel == "cupy_like/__init__.py" {
			os.WriteFile(filepath.Join(p.Root, rel), []byte("from . import _ext\n"), 0o644)
		}
		b, err := os.ReadFile(filepath.Join(p.Root, rel))
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, [2]string{rel, string(b)})
	}
	dist := "cupy_like-1.0.dist-info/"
	members = append(members, [2]string{dist + "WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n"},
		[2]string{dist + "METADATA", "Metadata-Version: 2.1\nName: cupy_like\nVersion: 1.0\n"})
	for _, m := range members[3:] {
		os.MkdirAll(filepath.Join(p.Root, filepath.Dir(m[0])), 0o755)
		os.WriteFile(filepath.Join(p.Root, m[0]), []byte(m[1]), 0o644)
	}
	rec := testenv.RecordOf(members, dist+"RECORD")
	os.WriteFile(filepath.Join(p.Root, dist+"RECORD"), []byte(rec), 0o644)
	whl = filepath.Join(t.TempDir(), "cupy_like-1.0-cp311-cp311-linux_x86_64.whl")
	f, err := os.Create(whl)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, m := range append(members, [2]string{dist + "RECORD", rec}) {
		h := &zip.FileHeader{Name: m[0], Method: zip.Deflate}
		h.SetMode(0o755)
		w, _ := zw.CreateHeader(h)
		w.Write([]byte(m[1]))
	}
	zw.Close()
	f.Close()
	return whl, p.Root, goneDir
}

// bindingKeys are a report's findings from binding (not the file-level
// and RECORD rules), as "ID severity member symbol library", paths read
// relative to root (a directory) or as members of root (a wheel).
func bindingKeys(rep *check.Report, root string) []string {
	var out []string
	for _, f := range rep.Findings {
		switch f.Rule {
		case finding.RuleUndefinedSymbol, finding.RuleModuleUndefined, finding.RuleMissingLibrary, finding.RuleVersionMismatch,
			finding.RuleMissingVersion, finding.RuleUnderlinked, finding.RuleProgramContext, finding.RuleMultipleUnwinders:
		default:
			continue
		}
		member := strings.TrimPrefix(strings.TrimPrefix(f.File, root+"!/"), root+"/")
		out = append(out, strings.Join([]string{f.ID, string(f.Severity), member, f.Symbol, f.Library}, " "))
	}
	slices.Sort(out)
	return out
}

// check WHEEL binds the members as pip installs them: its binding
// findings equal those of check on the same wheel unpacked, members named
// WHEEL!/member; with --python the extension module's helper_v2 is an
// error (the interpreter defines only the Py* API), as the real
// interpreter's import of the unpacked package fails.
func TestCheckWheelAsInstalled(t *testing.T) {
	whl, tree, goneDir := cupyLikeWheel(t)
	for _, py := range []string{"", "python"} {
		opts := check.Options{}
		if py != "" {
			opts.Python = testenv.File(t, "/usr/bin/python3.11", "python3.11")
		}
		repW, err := check.Run(context.Background(), []string{whl}, opts)
		if err != nil {
			t.Fatal(err)
		}
		repT, err := check.Run(context.Background(), []string{tree}, opts)
		if err != nil {
			t.Fatal(err)
		}
		w, u := bindingKeys(repW, whl), bindingKeys(repT, tree)
		if !slices.Equal(w, u) {
			t.Errorf("python=%q: the wheel's binding findings differ from the unpacked tree's:\nwheel:\n  %s\nunpacked:\n  %s", opts.Python, strings.Join(w, "\n  "), strings.Join(u, "\n  "))
		}
		want := "RD1004 error cupy_like/.libs/libhelper.so.1  libgone.so.1"
		if !slices.Contains(w, want) {
			t.Errorf("python=%q: no %q in %v", opts.Python, want, w)
		}
		ext := "cupy_like/_ext.cpython-311-x86_64-linux-gnu.so"
		for _, k := range w {
			if strings.Contains(k, ext+" helper_v2") {
				if py == "" && !strings.HasPrefix(k, "RD1006 note") || py != "" && !strings.HasPrefix(k, "RD1001 error") {
					t.Errorf("python=%q: %s", opts.Python, k)
				}
			}
			if strings.Contains(k, "PyLong_FromLong") && py != "" {
				t.Errorf("bound in the interpreter, PyLong_FromLong is still reported: %s", k)
			}
		}
		for _, f := range repW.Findings {
			if strings.Contains(f.Message+f.Fix+f.File, os.TempDir()+"/rocmdoctor-check-") {
				t.Errorf("a staged path shows: %+v", f)
			}
		}
	}
	// The oracle: the real interpreter fails the import naming the
	// missing library, then (with it) the symbol the module lacks.
	py := testenv.File(t, "/usr/bin/python3.11", "python3.11")
	out, err := exec.Command(py, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import cupy_like", tree).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "libgone.so.1") {
		t.Fatalf("import: %v %s, want libgone.so.1 not found", err, out)
	}
	cmd := exec.Command(py, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import cupy_like", tree)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+goneDir)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "undefined symbol: helper_v2") {
		t.Fatalf("import with libgone: %v %s, want helper_v2 undefined", err, out)
	}
}
