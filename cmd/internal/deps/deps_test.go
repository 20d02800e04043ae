package deps_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/clitest"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

const td = clitest.Testdata

func TestDepsMissingExitsThree(t *testing.T) {
	empty := t.TempDir()
	code, out, errOut := clitest.Run("deps", "--root", empty, "--hwcaps", "none", td+"hello")
	if code != cli.ExitFindings {
		t.Fatalf("exit %d, want 3\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "libfoo.so.1 => ") || !strings.Contains(out, "[rpath of "+td+"hello]") {
		t.Errorf("tree does not show libfoo via the executable's rpath:\n%s", out)
	}
	if !strings.Contains(out, "libc.so.6 not found") || !strings.Contains(errOut, "missing: libc.so.6") ||
		!strings.Contains(errOut, "tried "+empty+"/lib/x86_64-linux-gnu/libc.so.6") && !strings.Contains(errOut, "tried "+empty+"/lib64/libc.so.6") {
		t.Errorf("missing libc not explained:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	if code, _, _ := clitest.Run("deps", "--root", empty, "--fail-on", "never", td+"hello"); code != 0 {
		t.Errorf("--fail-on never: exit %d", code)
	}
}

func TestDepsFlatJSONWhy(t *testing.T) {
	empty := t.TempDir()
	code, out, _ := clitest.Run("deps", "--json", "--root", empty, "--lib-dir", "/", td+"hello")
	if code != cli.ExitFindings {
		t.Errorf("exit %d", code)
	}
	var doc struct {
		SchemaVersion int `json:"schema_version"`
		Files         []struct {
			Flat []struct{ Name, Path, Rule string }
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SchemaVersion != 1 || len(doc.Files) != 1 || len(doc.Files[0].Flat) < 2 ||
		doc.Files[0].Flat[0].Name != "libfoo.so.1" || doc.Files[0].Flat[0].Rule != "rpath" {
		t.Errorf("json = %s", out)
	}
	_, out, _ = clitest.Run("deps", "--flat", "--root", empty, td+"hello")
	if !strings.Contains(out, "\tlibfoo.so.1 => ") || !strings.Contains(out, "\tlibc.so.6 => not found") {
		t.Errorf("flat:\n%s", out)
	}
	_, out, _ = clitest.Run("deps", "--why", "libm.so.6", "--root", empty, td+"hello")
	if !strings.Contains(out, td+"hello → ") || !strings.Contains(out, "libfoo.so.1 → libm.so.6 (not found)") {
		t.Errorf("why:\n%s", out)
	}
}

func TestDepsUsage(t *testing.T) {
	for _, args := range [][]string{{"deps"}, {"deps", "--hwcaps", "v9", td + "hello"}, {"deps", "--legacy-hwcaps", "sometimes", td + "hello"}, {"deps", "--fail-on", "sometimes", td + "hello"}} {
		if code, _, _ := clitest.Run(args...); code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, _, errOut := clitest.Run("deps", td+"src/foo.c"); code != cli.ExitError || !strings.Contains(errOut, "foo.c: not an ELF file") {
		t.Errorf("non-ELF: exit %d, %q", code, errOut)
	}
}

// An absolute FILE outside --root is taken inside the sysroot, even when
// the root is a string prefix of it (/x/sys vs /x/sysroot).
func TestRootPrefixIsNotContainment(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "sys")
	os.MkdirAll(root, 0o755)
	outside := filepath.Join(dir, "sysroot", "hello")
	os.MkdirAll(filepath.Dir(outside), 0o755)
	b, err := os.ReadFile(td + "hello")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(outside, b, 0o755)
	code, _, errOut := clitest.Run("deps", "--root", root, outside)
	if code != cli.ExitError || !strings.Contains(errOut, filepath.Join(root, outside)) {
		t.Errorf("exit %d, stderr %q: want the path mapped into %s", code, errOut, root)
	}
	inside := filepath.Join(root, "hello")
	os.WriteFile(inside, b, 0o755)
	if code, _, errOut := clitest.Run("deps", "--root", root, "--fail-on", "never", inside); code != 0 {
		t.Errorf("a file inside the root: exit %d %s", code, errOut)
	}
}

// A damaged ld.so.cache in the sysroot is reported on stderr (resolution
// goes on without it); a missing one, normal in a sysroot, is not.
func TestDepsWarnsAboutDamagedCache(t *testing.T) {
	root := t.TempDir()
	if _, _, errOut := clitest.Run("deps", "--root", root, "--fail-on", "never", td+"hello"); strings.Contains(errOut, "ld.so.cache") {
		t.Errorf("a sysroot without a cache drew a warning:\n%s", errOut)
	}
	os.MkdirAll(filepath.Join(root, "etc"), 0o755)
	if err := os.WriteFile(filepath.Join(root, "etc", "ld.so.cache"), []byte("glibc-ld.so.cache1.1 and then garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, errOut := clitest.Run("deps", "--root", root, "--fail-on", "never", td+"hello")
	if !strings.Contains(errOut, "warning: "+filepath.Join(root, "etc", "ld.so.cache")+": ") || !strings.Contains(errOut, "ld.so.conf") {
		t.Errorf("no warning about the damaged cache:\n%s", errOut)
	}
}

// TestDepsNothingLoaded: a file with nothing to load says why instead of
// printing its name alone (ldd: "not a dynamic executable"), in the tree
// and in --flat; JSON marks a file without a dynamic section static.
func TestDepsNothingLoaded(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "s.c")
	os.WriteFile(src, []byte("void _start(void) { for (;;); }\n"), 0o644)
	static, pie := filepath.Join(dir, "static"), filepath.Join(dir, "static-pie")
	for out, flags := range map[string][]string{static: {"-static"}, pie: {"-static-pie", "-fPIE"}} {
		if b, err := exec.Command(gcc, append(flags, "-nostdlib", "-o", out, src)...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", flags, err, b)
		}
	}
	for _, c := range []struct{ file, want string }{
		{static, "statically linked: no dynamic section, nothing is loaded"},
		{pie, "no NEEDED entries: nothing is loaded; statically linked or static-pie"},
		{td + "be.o", "an object file: the linker reads it, ld.so never loads it"},
	} {
		code, out, errOut := clitest.Run("deps", c.file)
		if code != 0 || out != c.file+"\n    ("+c.want+")\n" {
			t.Errorf("deps %s: exit %d, stdout %q, stderr %q; want %q", c.file, code, out, errOut, c.want)
		}
		if _, out, _ = clitest.Run("deps", "--flat", c.file); out != "\t"+c.want+"\n" {
			t.Errorf("deps --flat %s: %q", c.file, out)
		}
	}
	// A library that needs nothing is not remarked on, with or without a
	// SONAME.
	for _, flags := range [][]string{{"-Wl,-soname,libnone.so"}, nil} {
		lib := filepath.Join(dir, "libnone.so")
		if b, err := exec.Command(gcc, append(flags, "-shared", "-fPIC", "-nostdlib", "-o", lib, src)...).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, b)
		}
		if _, out, _ := clitest.Run("deps", lib); out != lib+"\n" {
			t.Errorf("library %v: %q", flags, out)
		}
	}
	_, out, _ := clitest.Run("deps", "--json", static)
	var doc struct {
		Files []struct {
			Objects []struct {
				Static bool
				Deps   []any
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Files) != 1 || len(doc.Files[0].Objects) != 1 || !doc.Files[0].Objects[0].Static || doc.Files[0].Objects[0].Deps == nil {
		t.Errorf("json: %s", out)
	}
}

// A program whose interpreter does not exist: exit 3, the reason on
// stderr and in the JSON.
func TestDepsMissingInterpreter(t *testing.T) {
	prog := td + "checktree/bin/buildinterp"
	code, out, errOut := clitest.Run("deps", prog)
	if code != cli.ExitFindings || !strings.Contains(errOut, "missing: program interpreter /build/glibc-2.36/lib/ld-linux-x86-64.so.2: not found; the kernel will not start "+prog) {
		t.Errorf("exit %d\n%s\n%s", code, out, errOut)
	}
	_, out, _ = clitest.Run("deps", "--json", prog)
	if !strings.Contains(out, `"interpreter_problem": "not found"`) {
		t.Errorf("json:\n%s", out)
	}
	if code, _, _ := clitest.Run("deps", "--fail-on", "never", prog); code != 0 {
		t.Errorf("--fail-on never: exit %d", code)
	}
}

// TestDepsDlopen: --dlopen lists what the file declares in its
// .note.dlopen and the library names in its read-only data, each as
// dlopen() from it finds it, in the tree, the flat list and the JSON;
// missing ones are explained on stderr and leave the exit status alone.
func TestDepsDlopen(t *testing.T) {
	lib := td + "checktree/lib/libdlopener.so"
	dir, err := filepath.Abs(filepath.Dir(lib))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := clitest.Run("deps", "--dlopen", lib)
	if code != 0 {
		t.Fatalf("exit %d, want 0 (dlopen() loads do not count)\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"dlopen() from " + lib + ":",
		"├── libv.so.1 => " + dir + "/libv.so.1 [runpath] (declared in its .note.dlopen, feature \"v\", recommended)",
		"├── libdlwanted.so.1 not found (declared in its .note.dlopen, feature \"wanted\", required)",
		"└── libdlname.so.3 not found (named in its read-only data)",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("tree lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "libv.so.1 =>") != 1 || strings.Contains(out, "libdlopener.so =>") {
		t.Errorf("a declared name or the file's own is listed again:\n%s", out)
	}
	if !strings.Contains(errOut, "missing (dlopen from "+lib+"): libdlwanted.so.1\n  tried ") {
		t.Errorf("stderr does not explain the missing dlopen() library:\n%s", errOut)
	}
	if _, out, _ := clitest.Run("deps", lib); strings.Contains(out, "dlopen()") {
		t.Errorf("without --dlopen:\n%s", out)
	}
	_, out, _ = clitest.Run("deps", "--dlopen", "--flat", lib)
	if !strings.Contains(out, "\tlibdlwanted.so.1 => not found [dlopen]\n") || !strings.Contains(out, "/libv.so.1 (runpath) [dlopen]\n") {
		t.Errorf("flat:\n%s", out)
	}
	_, out, _ = clitest.Run("deps", "--dlopen", "--json", lib)
	var doc struct {
		Files []struct {
			Dlopen []struct {
				Names            []string
				Source, Priority string
				Dep              struct{ Path, Rule string }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range doc.Files[0].Dlopen {
		got = append(got, strings.Join(l.Names, "|")+" "+l.Source+" "+l.Priority+" "+l.Dep.Rule)
	}
	if want := "libv.so.2|libv.so.1 note recommended runpath, libdlwanted.so.1 note required missing, libdlname.so.3 string  missing"; strings.Join(got, ", ") != want {
		t.Errorf("json dlopen:\n got %s\nwant %s", strings.Join(got, ", "), want)
	}
	code, _, errOut = clitest.Run("deps", "--dlopen", td+"checktree/lib/libdlbadnote.so")
	if code != 0 || !strings.Contains(errOut, `priority "mandatory"`) {
		t.Errorf("a note that is not valid: exit %d, stderr %s", code, errOut)
	}
}

// Several files in --flat: each list under a "FILE:" line, as ldd prints
// them; one file: no header, as ldd.
func TestDepsFlatHeadsEachFile(t *testing.T) {
	_, out, _ := clitest.Run("deps", "--flat", "--fail-on", "never", td+"hello", td+"libfoo.so.1")
	lines := strings.Split(out, "\n")
	if len(lines) < 3 || lines[0] != td+"hello:" || !strings.Contains(out, "\n"+td+"libfoo.so.1:\n") {
		t.Errorf("two files:\n%s", out)
	}
	if _, out, _ = clitest.Run("deps", "--flat", "--fail-on", "never", td+"libfoo.so.1"); strings.HasPrefix(out, td) {
		t.Errorf("one file has a header:\n%s", out)
	}
}

// The tree shows each library once, as libtree does; -v adds the edges
// to libraries already loaded, -vv the candidates rejected, -vvv every
// subtree again; --max-depth cuts it and -p shows paths.
func TestDepsTreeVerbosity(t *testing.T) {
	abs, _ := filepath.Abs(td)
	app, two := td+"checktree/bin/pcapp", td+"checktree/lib/libtwounwinders.so"
	pc := "T/checktree/lib/pc/"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{app}, app + "\n├── libpccore.so => " + pc + "libpccore.so [runpath]\n└── libpcshared.so => " + pc + "libpcshared.so [runpath]\n"},
		{[]string{"-v", app}, app + "\n├── libpccore.so => " + pc + "libpccore.so [runpath]\n│   └── libpcshared.so [already-loaded] " + pc + "libpcshared.so\n└── libpcshared.so => " + pc + "libpcshared.so [runpath]\n"},
		{[]string{"-vvv", app}, app + "\n├── libpccore.so => " + pc + "libpccore.so [runpath]\n│   └── libpcshared.so => " + pc + "libpcshared.so [already-loaded]\n└── libpcshared.so => " + pc + "libpcshared.so [runpath]\n"},
		{[]string{"--max-depth", "1", "-p", app}, app + "\n├── " + pc + "libpccore.so [runpath]\n└── " + pc + "libpcshared.so [runpath]\n"},
		{[]string{"-vv", two}, two + "\n├── libunwind.so.1 => T/checktree/lib/libunwind.so.1 [runpath]\n│   rejected T/checktree/lib32/libunwind.so.1: ELF32 EM_386, need ELF64 EM_X86_64\n└── libgcc_s.so.1 => T/checktree/lib/libgcc_s.so.1 [runpath]\n"},
	} {
		_, out, errOut := clitest.Run(append([]string{"deps"}, c.args...)...)
		if got := strings.ReplaceAll(out, abs, "T"); got != c.want {
			t.Errorf("deps %v:\n%s\nwant:\n%s%s", c.args, got, c.want, errOut)
		}
	}
}
