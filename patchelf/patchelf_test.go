package patchelf_test

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
)

func copyFixture(t testing.TB, name string) string {
	t.Helper()
	return copyFile(t, testenv.Testdata(name))
}

// copyFile copies src into a new temporary directory, streaming it
// (copy_file_range where the kernel has it: a 1.3 GB library is never in
// the test's memory).
func copyFile(t testing.TB, src string) string {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	p := filepath.Join(t.TempDir(), filepath.Base(src))
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func edit(t *testing.T, path string, edits ...patchelf.Edit) *patchelf.Plan {
	t.Helper()
	p, err := patchelf.EditFile(path, edits, patchelf.Options{}, patchelf.WriteOptions{})
	if err != nil {
		t.Fatalf("%v: %v", edits, err)
	}
	return p
}

type state struct {
	needed           []string
	soname, rpath    string
	hasRPath, hasRun bool
	interp           string
	flags1           elf.DynFlag1
	debug            bool
	osabi            elf.OSABI
	stack            elfx.Stack
	size             int64
}

func read(t *testing.T, path string) state {
	t.Helper()
	f, err := elfx.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var s state
	s.interp, _ = f.Interp()
	s.osabi, s.stack, s.size = f.OSABI, f.GNUStack(), f.Size
	d, err := f.Dynamic()
	if err != nil {
		return s
	}
	s.needed, s.soname = d.Needed, d.Soname
	s.hasRPath, s.hasRun = d.HasRPath, d.HasRunPath
	s.rpath = d.RunPath
	if d.HasRPath {
		s.rpath = d.RPath
	}
	s.flags1 = d.Flags1
	_, s.debug = d.Value(elf.DT_DEBUG)
	return s
}

const long = "/opt/rocm-6.2.2/lib:/opt/rocm-6.2.2/llvm/lib:/nix/store/0123456789abcdefghijklmnopqrstuv-rocm-runtime/lib"

func TestEditsVisibleOnEveryFixture(t *testing.T) {
	for _, name := range []string{"libfoo.so.1", "hello", "libi386.so", "libbe.so", "libsysv.so", "libgpu.so"} {
		t.Run(name, func(t *testing.T) {
			p := copyFixture(t, name)
			before := read(t, p)
			edit(t, p, patchelf.Edit{Kind: patchelf.SetRPath, Arg: long})
			if s := read(t, p); s.rpath != long || !s.hasRun || s.hasRPath {
				t.Errorf("set-rpath: %+v", s)
			}
			edit(t, p, patchelf.Edit{Kind: patchelf.AddNeeded, Arg: "libamdhip64.so.6"})
			if s := read(t, p); len(s.needed) != len(before.needed)+1 || s.needed[0] != "libamdhip64.so.6" {
				t.Errorf("add-needed: %v", s.needed)
			}
			edit(t, p, patchelf.Edit{Kind: patchelf.ReplaceNeeded, Arg: "libamdhip64.so.6", Arg2: "libamdhip64.so.5"})
			if s := read(t, p); s.needed[0] != "libamdhip64.so.5" {
				t.Errorf("replace-needed: %v", s.needed)
			}
			edit(t, p, patchelf.Edit{Kind: patchelf.SetSoname, Arg: "librenamed-with-a-much-longer-name.so.42"})
			if s := read(t, p); s.soname != "librenamed-with-a-much-longer-name.so.42" {
				t.Errorf("set-soname: %q", s.soname)
			}
			edit(t, p, patchelf.Edit{Kind: patchelf.NoDefaultLib}, patchelf.Edit{Kind: patchelf.AddDebugTag})
			if s := read(t, p); s.flags1&elf.DF_1_NODEFLIB == 0 || !s.debug {
				t.Errorf("nodeflib/debug: %+v", s)
			}
			edit(t, p, patchelf.Edit{Kind: patchelf.RemoveNeeded, Arg: "libamdhip64.so.5"}, patchelf.Edit{Kind: patchelf.RemoveRPath})
			if s := read(t, p); len(s.needed) != len(before.needed) || s.rpath != "" || s.hasRun {
				t.Errorf("remove: %+v", s)
			}
			edit(t, p, patchelf.Edit{Kind: patchelf.SetExecStack})
			if s := read(t, p); !s.stack.Present || !s.stack.Executable {
				t.Errorf("set-execstack: %+v", s.stack)
			}
			edit(t, p, patchelf.Edit{Kind: patchelf.ClearExecStack}, patchelf.Edit{Kind: patchelf.SetOSABI, Arg: "linux"})
			if s := read(t, p); s.stack.Executable || s.osabi != elf.ELFOSABI_LINUX {
				t.Errorf("clear-execstack/os-abi: %+v", s)
			}
			if before.interp != "" {
				edit(t, p, patchelf.Edit{Kind: patchelf.SetInterpreter, Arg: "/lib64/../lib64/../lib64/ld-linux-x86-64.so.2"})
				if s := read(t, p); s.interp != "/lib64/../lib64/../lib64/ld-linux-x86-64.so.2" {
					t.Errorf("set-interpreter: %q", s.interp)
				}
			}
		})
	}
}

func TestRepeatedEditsDoNotGrow(t *testing.T) {
	p := copyFixture(t, "libfoo.so.1")
	edit(t, p, patchelf.Edit{Kind: patchelf.SetRPath, Arg: long}, patchelf.Edit{Kind: patchelf.AddNeeded, Arg: "libx.so.1"})
	size := read(t, p).size
	for i := 0; i < 3; i++ {
		plan := edit(t, p, patchelf.Edit{Kind: patchelf.SetRPath, Arg: long}, patchelf.Edit{Kind: patchelf.AddNeeded, Arg: "libx.so.1"})
		if plan.Changed || read(t, p).size != size {
			t.Fatalf("repeat %d: changed=%v size %d → %d", i, plan.Changed, size, read(t, p).size)
		}
	}
	// A shorter run path is written in place: no growth, no new segment.
	q := copyFixture(t, "libfoo.so.1")
	plan := edit(t, q, patchelf.Edit{Kind: patchelf.SetRPath, Arg: "$ORIGIN"})
	if plan.AppendSize != 0 || read(t, q).size != plan.OldSize || read(t, q).rpath != "$ORIGIN" {
		t.Errorf("shorter rpath grew the file: %+v", plan)
	}
}

// TestSecondGrowingEditExtendsInPlace: after a growing edit has put
// .dynstr at the end of the file in a segment of its own, a second growing
// edit extends that segment by the new strings instead of appending
// another copy of the whole table (patchelf grows the file by the table on
// every such edit), on every byte order and class.
func TestSecondGrowingEditExtendsInPlace(t *testing.T) {
	for _, name := range []string{"libfoo.so.1", "hello", "libi386.so", "libbe.so", "libsysv.so"} {
		t.Run(name, func(t *testing.T) {
			p := copyFixture(t, name)
			first := edit(t, p, patchelf.Edit{Kind: patchelf.SetRPath, Arg: long})
			if first.Extended != "" || first.AppendSize == 0 {
				t.Fatalf("first growing edit: %+v", first)
			}
			phnum := func() int {
				f, err := elfx.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				return len(f.Progs())
			}
			progs := phnum()
			second := long + ":/opt/rocm-6.2.2/lib64:/a/second/edit/grows/the/table/where/it/is"
			plan := edit(t, p, patchelf.Edit{Kind: patchelf.SetRPath, Arg: second}, patchelf.Edit{Kind: patchelf.AddNeeded, Arg: "libextra-needed.so.3"})
			if plan.Extended != ".dynstr" || len(plan.Moved) != 0 {
				t.Fatalf("second growing edit did not extend .dynstr in place: %+v", plan)
			}
			want := int64(len(second) + 1 + len("libextra-needed.so.3") + 1)
			if got := plan.NewSize - plan.OldSize; got > want {
				t.Errorf("file grew by %d bytes, want at most the %d bytes of new strings", got, want)
			}
			s := read(t, p)
			if s.rpath != second || s.needed[0] != "libextra-needed.so.3" || s.size != plan.NewSize {
				t.Errorf("after the second edit: %+v", s)
			}
			if n := phnum(); n != progs {
				t.Errorf("%d program headers, want %d (no new segment)", n, progs)
			}
			// readelf is optional for a Go-only `go test`, required in the
			// CI tier (where a missing one fails instead of passing quietly).
			readelf, err := exec.LookPath("readelf")
			if err != nil && testenv.RequireAll() {
				t.Fatalf("readelf (binutils) is missing: %v", err)
			}
			if err == nil {
				out, err := exec.Command(readelf, "-a", "-W", p).CombinedOutput()
				if err != nil || bytes.Contains(out, []byte("Warning")) {
					t.Errorf("readelf -a: %v\n%s", err, out)
				}
			}
		})
	}
}

func TestCombinedEqualsSequential(t *testing.T) {
	edits := []patchelf.Edit{
		{Kind: patchelf.SetRPath, Arg: long},
		{Kind: patchelf.ReplaceNeeded, Arg: "libm.so.6", Arg2: "libmvec.so.1"},
		{Kind: patchelf.AddNeeded, Arg: "libhipblas.so.2"},
		{Kind: patchelf.SetSoname, Arg: "libcombined.so.9"},
	}
	a, b := copyFixture(t, "libfoo.so.1"), copyFixture(t, "libfoo.so.1")
	edit(t, a, edits...)
	for _, e := range edits {
		edit(t, b, e)
	}
	sa, sb := read(t, a), read(t, b)
	sa.size, sb.size = 0, 0
	if strings.Join(sa.needed, ",") != strings.Join(sb.needed, ",") || sa.rpath != sb.rpath || sa.soname != sb.soname {
		t.Errorf("combined %+v\nsequential %+v", sa, sb)
	}
	// The patchelf 0.14.3 bug: --set-rpath X --replace-needed A B wrote RUNPATH = B.
	if sa.rpath != long {
		t.Errorf("RUNPATH = %q after a combined set-rpath/replace-needed, want %q", sa.rpath, long)
	}
	// .gnu.version_r follows the renamed NEEDED entry.
	f, _ := elfx.Open(a)
	defer f.Close()
	needs, _ := f.VersionNeeds()
	if len(needs) != 1 || needs[0].File != "libmvec.so.1" {
		t.Errorf(".gnu.version_r = %+v", needs)
	}
}

func TestForceRPathAndConversion(t *testing.T) {
	p := copyFixture(t, "hello") // has DT_RPATH
	edit(t, p, patchelf.Edit{Kind: patchelf.SetRPath, Arg: "/x"})
	if s := read(t, p); !s.hasRun || s.hasRPath {
		t.Errorf("set-rpath should convert DT_RPATH to DT_RUNPATH: %+v", s)
	}
	q := copyFixture(t, "libfoo.so.1") // has DT_RUNPATH
	if _, err := patchelf.EditFile(q, []patchelf.Edit{{Kind: patchelf.SetRPath, Arg: "/y"}}, patchelf.Options{ForceRPath: true}, patchelf.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if s := read(t, q); s.hasRun || !s.hasRPath || s.rpath != "/y" {
		t.Errorf("--force-rpath: %+v", s)
	}
}

func TestErrorsLeaveFileUntouched(t *testing.T) {
	for _, tt := range []struct {
		file string
		e    patchelf.Edit
		msg  string
	}{
		{"libfoo.so.1", patchelf.Edit{Kind: patchelf.SetInterpreter, Arg: "/lib/ld.so"}, "no program interpreter (no PT_INTERP) to replace"},
		{"archive_a.o", patchelf.Edit{Kind: patchelf.SetRPath, Arg: "/x"}, "relocatable object"},
		{"libfoo.so.1", patchelf.Edit{Kind: patchelf.SetOSABI, Arg: "plan9"}, "unrecognized OS ABI"},
	} {
		p := copyFixture(t, tt.file)
		orig, _ := os.ReadFile(p)
		_, err := patchelf.EditFile(p, []patchelf.Edit{tt.e}, patchelf.Options{}, patchelf.WriteOptions{})
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s %v: err = %v, want %q", tt.file, tt.e, err, tt.msg)
		}
		now, _ := os.ReadFile(p)
		if !bytes.Equal(orig, now) {
			t.Errorf("%s changed after a failed edit", tt.file)
		}
		onlyFile(t, p)
	}
	// The copy made while planning is removed when nothing changes, and
	// renamed into place (not left beside it) when something does.
	p := copyFixture(t, "libfoo.so.1")
	rp := read(t, p).rpath
	if plan, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.SetRPath, Arg: rp}}, patchelf.Options{}, patchelf.WriteOptions{}); err != nil || plan.Changed {
		t.Fatalf("no-op edit: changed %v, err %v", plan != nil && plan.Changed, err)
	}
	onlyFile(t, p)
	edit(t, p, patchelf.Edit{Kind: patchelf.SetRPath, Arg: long})
	onlyFile(t, p)
}

// onlyFile fails unless p is the only entry of its directory: no temporary
// copy was left behind.
func onlyFile(t *testing.T, p string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(p))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != filepath.Base(p) {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("directory of %s holds %v, want only the file", filepath.Base(p), names)
	}
}

func TestInPlaceKeepsInodeAndDryRunWritesNothing(t *testing.T) {
	p := copyFixture(t, "libfoo.so.1")
	link := p + ".hardlink"
	if err := os.Link(p, link); err != nil {
		testenv.Missing(t, "hard links in the temporary directory ("+err.Error()+")", "")
	}
	orig, _ := os.ReadFile(p)
	if _, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.SetRPath, Arg: long}}, patchelf.Options{}, patchelf.WriteOptions{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.ReadFile(p); !bytes.Equal(orig, now) {
		t.Fatalf("dry run wrote")
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 2 {
		t.Errorf("dry run left %d entries beside the file and its hard link", len(ents)-2)
	}
	if _, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.SetRPath, Arg: long}}, patchelf.Options{}, patchelf.WriteOptions{InPlace: true}); err != nil {
		t.Fatal(err)
	}
	if s := read(t, link); s.rpath != long {
		t.Errorf("--in-place did not write through the hard link: %q", s.rpath)
	}
	// The default path replaces the file: the hard link keeps the old data.
	q := copyFixture(t, "libfoo.so.1")
	os.Link(q, q+".hl")
	edit(t, q, patchelf.Edit{Kind: patchelf.SetRPath, Arg: long})
	if s := read(t, q+".hl"); s.rpath == long {
		t.Errorf("the default write path modified another hard link")
	}
	if st, _ := os.Stat(q); st.Mode().Perm() != 0o755 {
		t.Errorf("mode not kept: %v", st.Mode())
	}
}

func TestPageSize(t *testing.T) {
	p := copyFixture(t, "libfoo.so.1")
	plan, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.SetRPath, Arg: long}}, patchelf.Options{PageSize: 65536}, patchelf.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if plan.AppendOffset%65536 != 0 {
		t.Errorf("new segment at 0x%x, not 64 KiB aligned", plan.AppendOffset)
	}
}

// TestRealLoaderAndStrip builds a PIE and a non-PIE executable and a
// shared library with gcc, applies each growing edit, and checks the
// executables still run and the library still loads (dlopen harness),
// before and after strip, with readelf reporting no warnings.
// runner runs a program in dir and fails the test when it fails.
func runner(t *testing.T, dir string) func(name string, args ...string) string {
	return func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
}

func TestRealLoaderAndStrip(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	strip := testenv.Tool(t, "strip", "binutils")
	readelf := testenv.Tool(t, "readelf", "binutils")
	dir := t.TempDir()
	w := func(n, s string) { os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644) }
	w("lib.c", "int lib_value(void){return 42;}\n")
	w("main.c", "#include <stdio.h>\nextern int lib_value(void);\nint main(void){printf(\"%d\\n\", lib_value());return 0;}\n")
	w("dl.c", "#include <dlfcn.h>\n#include <stdio.h>\nint main(int c,char**v){void*h=dlopen(v[1],RTLD_NOW);if(!h){fprintf(stderr,\"%s\\n\",dlerror());return 1;}int(*f)(void)=dlsym(h,v[2]);if(!f){fprintf(stderr,\"no %s\\n\",v[2]);return 1;}printf(\"%d\\n\",f());return 0;}\n")
	run := runner(t, dir)
	run(gcc, "-shared", "-fPIC", "-o", "libv.so", "lib.c", "-Wl,-soname,libv.so")
	run(gcc, "-o", "pie", "main.c", "-L.", "-lv", "-pie", "-fPIE")
	run(gcc, "-o", "nopie", "main.c", "-L.", "-lv", "-no-pie")
	run(gcc, "-o", "dl", "dl.c", "-ldl")
	cases := [][]patchelf.Edit{
		{{Kind: patchelf.SetRPath, Arg: dir + ":" + long}},
		{{Kind: patchelf.SetRPath, Arg: dir}, {Kind: patchelf.AddNeeded, Arg: "libm.so.6"}, {Kind: patchelf.AddDebugTag}},
		{{Kind: patchelf.SetRPath, Arg: "$ORIGIN"}, {Kind: patchelf.SetInterpreter, Arg: "/lib64/../lib64/../lib64/ld-linux-x86-64.so.2"}},
	}
	for ci, edits := range cases {
		for _, exe := range []string{"pie", "nopie"} {
			p := filepath.Join(dir, exe+"-edited")
			b, _ := os.ReadFile(filepath.Join(dir, exe))
			os.WriteFile(p, b, 0o755)
			if _, err := patchelf.EditFile(p, edits, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
				t.Fatalf("case %d %s: %v", ci, exe, err)
			}
			if out := run(p); strings.TrimSpace(out) != "42" {
				t.Errorf("case %d %s prints %q", ci, exe, out)
			}
			if warn := run(readelf, "-a", "-W", p); strings.Contains(warn, "Warning") {
				t.Errorf("case %d %s: readelf warns", ci, exe)
			}
			// A second growing edit extends the table where the first put
			// it; the program still runs.
			plan, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.SetRPath, Arg: dir + ":" + long + ":/grown/again/in/place"}}, patchelf.Options{}, patchelf.WriteOptions{})
			if err != nil {
				t.Fatalf("case %d %s, second edit: %v", ci, exe, err)
			}
			if ci == 0 && plan.Extended != ".dynstr" {
				t.Errorf("case %d %s: second growing edit added a segment: %+v", ci, exe, plan)
			}
			if out := run(p); strings.TrimSpace(out) != "42" {
				t.Errorf("case %d %s after a second edit prints %q", ci, exe, out)
			}
			if warn := run(readelf, "-a", "-W", p); strings.Contains(warn, "Warning") {
				t.Errorf("case %d %s: readelf warns after a second edit", ci, exe)
			}
			run(strip, p)
			if out := run(p); strings.TrimSpace(out) != "42" {
				t.Errorf("case %d %s after strip prints %q", ci, exe, out)
			}
		}
		lib := filepath.Join(dir, "libv-edited.so")
		b, _ := os.ReadFile(filepath.Join(dir, "libv.so"))
		os.WriteFile(lib, b, 0o755)
		libEdits := append([]patchelf.Edit{{Kind: patchelf.SetSoname, Arg: "libv-with-a-much-longer-soname.so.1"}}, edits[0])
		if _, err := patchelf.EditFile(lib, libEdits, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if out := run(filepath.Join(dir, "dl"), lib, "lib_value"); strings.TrimSpace(out) != "42" {
			t.Errorf("case %d: dlopen of the edited library prints %q", ci, out)
		}
		run(strip, lib)
		if out := run(filepath.Join(dir, "dl"), lib, "lib_value"); strings.TrimSpace(out) != "42" {
			t.Errorf("case %d: dlopen after strip prints %q", ci, out)
		}
	}
}

// FuzzEditSequences applies random edit sequences to the fixtures: each
// either fails cleanly or yields a plan whose verified result re-parses.
func FuzzEditSequences(f *testing.F) {
	f.Add(uint8(0), []byte{0, 1, 2, 3}, "abc")
	f.Add(uint8(1), []byte{4, 5, 6, 0, 0}, "/opt/rocm/lib")
	// The fixtures, and the same stripped of their section headers
	// (edited through what the loader sees).
	fixtures := []string{"libfoo.so.1", "hello", "libi386.so", "libbe.so", "libsysv.so",
		"-libfoo.so.1", "-hello", "-libi386.so", "-libbe.so", "-libsysv.so"}
	kinds := []patchelf.Kind{patchelf.SetRPath, patchelf.AddRPath, patchelf.RemoveRPath, patchelf.AddNeeded, patchelf.RemoveNeeded,
		patchelf.ReplaceNeeded, patchelf.SetSoname, patchelf.SetInterpreter, patchelf.NoDefaultLib, patchelf.AddDebugTag,
		patchelf.ClearExecStack, patchelf.SetExecStack, patchelf.SetOSABI, patchelf.RenameDynamicSymbols, patchelf.ClearSymbolVersion}
	f.Fuzz(func(t *testing.T, which uint8, ops []byte, arg string) {
		if len(ops) > 16 || len(arg) > 300 {
			return
		}
		name := fixtures[int(which)%len(fixtures)]
		b, err := os.ReadFile(testenv.Testdata(strings.TrimPrefix(name, "-")))
		if err != nil {
			t.Fatal(err)
		}
		if name[0] == '-' {
			testenv.StripSectionHeaders(b)
		}
		file, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), "fuzz")
		if err != nil {
			t.Fatal(err)
		}
		syms, _ := file.DynamicSymbols()
		var edits []patchelf.Edit
		for i, o := range ops {
			a := arg
			if i%2 == 1 {
				a = strings.Repeat(arg, 2)
			}
			e := patchelf.Edit{Kind: kinds[int(o)%len(kinds)], Arg: a, Arg2: a + "x"}
			if len(syms) > 0 && (e.Kind == patchelf.RenameDynamicSymbols || e.Kind == patchelf.ClearSymbolVersion) {
				name := syms[int(o)%len(syms)].Name
				e.Arg, e.Renames = name, map[string]string{name: a, a: name}
			}
			edits = append(edits, e)
		}
		plan, err := patchelf.PlanFile(file, edits, patchelf.Options{})
		if err != nil {
			return
		}
		if err := plan.Verify(file); err != nil {
			if strings.Contains(err.Error(), "\x00") || strings.ContainsAny(arg, "\x00") {
				return // a NUL in a name cannot survive a string table
			}
			t.Fatalf("%v: %v", edits, err)
		}
		// A second, growing edit of the result: it meets the layouts the
		// first one leaves (a .dynstr at the end of the file, grown in
		// place, new segments after new segments).
		out := make([]byte, plan.NewSize)
		copy(out, b)
		if err := plan.Apply(sliceWriter(out)); err != nil {
			t.Fatalf("%v: apply: %v", edits, err)
		}
		after, err := elfx.NewFileSize(bytes.NewReader(out), int64(len(out)), "fuzz (after)")
		if err != nil {
			t.Fatalf("%v: the result does not parse: %v", edits, err)
		}
		second := []patchelf.Edit{{Kind: patchelf.SetRPath, Arg: strings.Repeat(arg+":", 3) + "/second/edit"}, {Kind: patchelf.AddNeeded, Arg: "lib" + arg + ".so.2"}}
		plan2, err := patchelf.PlanFile(after, second, patchelf.Options{})
		if err != nil {
			return
		}
		if err := plan2.Verify(after); err != nil && !strings.ContainsAny(arg, "\x00") {
			t.Fatalf("%v then %v: %v", edits, second, err)
		}
	})
}

// sliceWriter writes into a byte slice that already has the final size.
type sliceWriter []byte

func (w sliceWriter) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(w)) {
		return 0, fmt.Errorf("write of %d bytes at %d outside %d", len(p), off, len(w))
	}
	return copy(w[off:], p), nil
}

// TestRenameDynamicSymbolsRealLoader renames every seventh of 300 exported
// functions in a library and in the programs that call them, then runs the
// programs and dlsym()s the new names through the real loader: the GNU and
// SysV hash tables, the reordered .dynsym, .gnu.version and the relocations
// must all agree, before and after strip.
func TestRenameDynamicSymbolsRealLoader(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	strip := testenv.Tool(t, "strip", "binutils")
	readelf := testenv.Tool(t, "readelf", "binutils")
	dir := t.TempDir()
	w := func(n, s string) { os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644) }
	var lib, decl, calls strings.Builder
	renames := map[string]string{}
	sum := 0
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&lib, "int fn_%d(void){return %d;}\n", i, i)
		fmt.Fprintf(&decl, "extern int fn_%d(void);\n", i)
		if i%3 == 0 {
			fmt.Fprintf(&calls, "s += fn_%d();\n", i)
			sum += i
		}
		if i%7 == 0 {
			renames[fmt.Sprintf("fn_%d", i)] = fmt.Sprintf("rocm_renamed_fn_%d", i)
		}
	}
	lib.WriteString("int lib_data = 5;\nint call_inside(void){return fn_21()+fn_22();}\n")
	renames["lib_data"] = "rocm_lib_data"
	w("lib.c", lib.String())
	w("main.c", "#include <stdio.h>\n"+decl.String()+"extern int lib_data; extern int call_inside(void);\nint main(void){int s=0;\n"+calls.String()+
		"printf(\"%d %d %d\\n\", s, lib_data, call_inside());return 0;}\n")
	w("dl.c", "#include <dlfcn.h>\n#include <stdio.h>\nint main(int c,char**v){void*h=dlopen(v[1],RTLD_NOW);if(!h){fprintf(stderr,\"%s\\n\",dlerror());return 1;}"+
		"for(int i=2;i<c;i++){int(*f)(void)=dlsym(h,v[i]);if(!f){printf(\"missing %s\\n\",v[i]);continue;}printf(\"%d\\n\",f());}return 0;}\n")
	run := runner(t, dir)
	run(gcc, "-shared", "-fPIC", "-o", "libr.so", "lib.c", "-Wl,-soname,libr.so", "-Wl,--hash-style=both")
	run(gcc, "-o", "pie", "main.c", "-L.", "-lr", "-pie", "-fPIE", "-Wl,-rpath,"+dir)
	run(gcc, "-o", "nopie", "main.c", "-L.", "-lr", "-no-pie", "-Wl,-rpath,"+dir)
	run(gcc, "-o", "dl", "dl.c", "-ldl")
	want := fmt.Sprintf("%d 5 43", sum)
	if out := strings.TrimSpace(run(filepath.Join(dir, "pie"))); out != want {
		t.Fatalf("before: %q, want %q", out, want)
	}
	order := func(p string) []string {
		f, err := elfx.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		syms, _ := f.DynamicSymbols()
		var names []string
		for _, s := range syms {
			names = append(names, s.Name)
		}
		return names
	}
	libPath := filepath.Join(dir, "libr.so")
	before := order(libPath)
	ren := patchelf.Edit{Kind: patchelf.RenameDynamicSymbols, Renames: renames}
	edit(t, libPath, ren, patchelf.Edit{Kind: patchelf.SetRPath, Arg: "$ORIGIN"})
	after := order(libPath)
	moved := 0
	for i := range before {
		if _, renamed := renames[before[i]]; !renamed && before[i] != after[i] {
			moved++
		}
	}
	if moved == 0 {
		t.Errorf("no symbol changed place: the GNU hash reordering is not exercised")
	}
	for _, exe := range []string{"pie", "nopie"} {
		edit(t, filepath.Join(dir, exe), ren)
		if out := strings.TrimSpace(run(filepath.Join(dir, exe))); out != want {
			t.Errorf("%s after rename: %q, want %q", exe, out, want)
		}
	}
	check := func(stage string) {
		t.Helper()
		out := run(filepath.Join(dir, "dl"), libPath, "rocm_renamed_fn_14", "fn_14", "fn_15", "rocm_renamed_fn_294", "call_inside")
		if got := strings.Fields(out); strings.Join(got, " ") != "14 missing fn_14 15 294 43" {
			t.Errorf("%s: dlsym results %q", stage, out)
		}
		if warn := run(readelf, "-a", "-W", libPath); strings.Contains(warn, "Warning") {
			t.Errorf("%s: readelf warns", stage)
		}
	}
	check("after rename")
	run(strip, libPath)
	check("after strip")
	if out := strings.TrimSpace(run(filepath.Join(dir, "pie"))); out != want {
		t.Errorf("pie with the stripped library: %q", out)
	}
	// A map that matches nothing is an error, and the file is untouched.
	b0, _ := os.ReadFile(libPath)
	if _, err := patchelf.EditFile(libPath, []patchelf.Edit{{Kind: patchelf.RenameDynamicSymbols, Renames: map[string]string{"no_such": "x"}}}, patchelf.Options{}, patchelf.WriteOptions{}); err == nil {
		t.Errorf("renaming an absent symbol succeeded")
	}
	if b1, _ := os.ReadFile(libPath); !bytes.Equal(b0, b1) {
		t.Errorf("failed rename changed the file")
	}
}

// Renaming on the 32-bit, big-endian and SysV-hash-only fixtures: the new
// name is found through the file's own hash table and the old one is gone.
func TestRenameOnEveryFixture(t *testing.T) {
	for _, name := range []string{"libfoo.so.1", "libi386.so", "libbe.so", "libsysv.so"} {
		p := copyFixture(t, name)
		f, err := elfx.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		syms, _ := f.DynamicSymbols()
		f.Close()
		var target string
		for _, s := range syms {
			if s.Section != elf.SHN_UNDEF && s.Name != "" && s.Bind == elf.STB_GLOBAL {
				target = s.Name
				break
			}
		}
		if target == "" {
			t.Fatalf("%s: no defined global symbol", name)
		}
		edit(t, p, patchelf.Edit{Kind: patchelf.RenameDynamicSymbols, Renames: map[string]string{target: "renamed_" + target + "_longer"}})
		f, err = elfx.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		tab, err := f.DynamicSymbolTable()
		if err != nil {
			t.Fatal(err)
		}
		if len(tab.Lookup("renamed_"+target+"_longer")) == 0 || len(tab.Lookup(target)) != 0 {
			t.Errorf("%s: rename of %s not visible through the hash table", name, target)
		}
		f.Close()
	}
}

func TestParseRenameMap(t *testing.T) {
	m, err := patchelf.ParseRenameMap("a b\n\n  c   d  \n")
	if err != nil || len(m) != 2 || m["a"] != "b" || m["c"] != "d" {
		t.Errorf("got %v, %v", m, err)
	}
	for _, bad := range []string{"", "a\n", "a b c\n", "a b\na c\n"} {
		if _, err := patchelf.ParseRenameMap(bad); err == nil {
			t.Errorf("ParseRenameMap(%q) succeeded", bad)
		}
	}
}

// A static-pie executable never runs the dynamic loader: dynamic edits are
// refused with the reason, the file is untouched, and header-only edits
// still work (the program runs afterwards).
func TestStaticPIERejectedClearly(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	src, exe := filepath.Join(dir, "sp.c"), filepath.Join(dir, "sp")
	os.WriteFile(src, []byte("int main(void){return 3;}\n"), 0o644)
	if out, err := exec.Command(gcc, "-static-pie", "-o", exe, src).CombinedOutput(); err != nil {
		testenv.Missing(t, "gcc -static-pie ("+strings.TrimSpace(string(out))+")", "libc6-dev")
	}
	b0, _ := os.ReadFile(exe)
	for _, e := range []patchelf.Edit{{Kind: patchelf.SetRPath, Arg: "/opt/rocm/lib"}, {Kind: patchelf.AddNeeded, Arg: "libm.so.6"}, {Kind: patchelf.AddDebugTag}} {
		_, err := patchelf.EditFile(exe, []patchelf.Edit{e}, patchelf.Options{}, patchelf.WriteOptions{})
		if err == nil || !strings.Contains(err.Error(), "static-pie") {
			t.Errorf("%s on a static-pie: %v", e.Kind, err)
		}
	}
	if b1, _ := os.ReadFile(exe); !bytes.Equal(b0, b1) {
		t.Fatalf("refused edits changed the file")
	}
	edit(t, exe, patchelf.Edit{Kind: patchelf.ClearExecStack})
	var ee *exec.ExitError
	if err := exec.Command(exe).Run(); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("static-pie after --clear-execstack: %v", err)
	}
}

// Verification must notice a result whose symbol names differ: the plan's
// new segment (holding the moved .dynstr) is tampered with before Verify.
func TestVerifyCatchesChangedSymbolName(t *testing.T) {
	b, err := os.ReadFile(testenv.Testdata("libfoo.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), "libfoo.so.1")
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.DynamicSymbols()
	var name string
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && len(s.Name) > 3 {
			name = s.Name
		}
	}
	p, err := patchelf.PlanFile(f, []patchelf.Edit{{Kind: patchelf.SetRPath, Arg: strings.Repeat("/opt/rocm/lib:", 40)}}, patchelf.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Verify(f); err != nil {
		t.Fatalf("untampered plan: %v", err)
	}
	i := bytes.Index(p.AppendTail, []byte("\x00"+name+"\x00"))
	if name == "" || i < 0 {
		t.Fatalf("symbol %q not in the new segment's .dynstr", name)
	}
	p.AppendTail[i+1] ^= 0x20
	if err := p.Verify(f); err == nil || !strings.Contains(err.Error(), "symbol names") {
		t.Errorf("tampered symbol name %q: Verify = %v", name, err)
	}
}

// SameWrites, Writes, Overlay and SizeAfter describe a plan's writes
// without a file: wheel relink compares a predicted edit with the real one
// and hashes a library through it while inflating it.
func TestPlanWrites(t *testing.T) {
	p := &patchelf.Plan{
		Patches:      []patchelf.Patch{{Offset: 100, Data: []byte("abc")}, {Offset: 10, Data: []byte("xy")}},
		AppendOffset: 4096, Append: []byte("HEAD"), AppendTail: []byte("tail"), AppendSize: 8,
	}
	q := &patchelf.Plan{
		Patches:      []patchelf.Patch{{Offset: 10, Data: []byte("xy")}, {Offset: 100, Data: []byte("abc")}},
		AppendOffset: 4096, Append: []byte("HEAD"), AppendTail: []byte("tail"), AppendSize: 8,
	}
	if !p.SameWrites(q) || !q.SameWrites(p) {
		t.Error("the same writes in another order differ")
	}
	for name, change := range map[string]func(*patchelf.Plan){
		"patch byte":     func(x *patchelf.Plan) { x.Patches[1].Data = []byte("abd") },
		"patch offset":   func(x *patchelf.Plan) { x.Patches[0].Offset = 11 },
		"one patch more": func(x *patchelf.Plan) { x.Patches = append(x.Patches, patchelf.Patch{Offset: 1, Data: []byte{0}}) },
		"append":         func(x *patchelf.Plan) { x.Append = []byte("HEAd") },
		"append tail":    func(x *patchelf.Plan) { x.AppendTail = []byte("tai") },
		"append offset":  func(x *patchelf.Plan) { x.AppendOffset = 8192 },
		"append size":    func(x *patchelf.Plan) { x.AppendSize = 9 },
	} {
		r := *q
		r.Patches = append([]patchelf.Patch(nil), q.Patches...)
		change(&r)
		if p.SameWrites(&r) {
			t.Errorf("%s: plans that write differently are the same", name)
		}
	}
	for _, c := range []struct {
		from, to int64
		want     bool
	}{{0, 10, false}, {0, 11, true}, {11, 12, true}, {12, 100, false}, {102, 103, true}, {103, 4096, false}, {4103, 5000, true}, {4104, 5000, false}} {
		if got := p.Writes(c.from, c.to); got != c.want {
			t.Errorf("Writes(%d, %d) = %v", c.from, c.to, got)
		}
	}
	b := bytes.Repeat([]byte{'.'}, 20)
	p.Overlay(b, 95) // bytes 95..114
	if string(b) != ".....abc............" {
		t.Errorf("Overlay at 95: %q", b)
	}
	b = bytes.Repeat([]byte{'.'}, 10)
	p.Overlay(b, 4094)
	if string(b) != "..HEADtail" {
		t.Errorf("Overlay at 4094: %q", b)
	}
	if got := p.SizeAfter(1000); got != 4104 {
		t.Errorf("SizeAfter(1000) = %d, want 4104", got)
	}
	if got := (&patchelf.Plan{}).SizeAfter(1000); got != 1000 {
		t.Errorf("SizeAfter without an appended segment = %d", got)
	}
}
