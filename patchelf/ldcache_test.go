package patchelf_test

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
)

// ldcacheNote returns the resolution cache note's descriptor of the file
// at p, whether its section is allocated, and whether a PT_NOTE maps it
// (where the loader looks); ok is false without the section.
func ldcacheNote(t *testing.T, p string) (desc string, alloc, mapped, ok bool) {
	t.Helper()
	f, err := elf.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".note.nixos.ldcache")
	if s == nil {
		return "", false, false, false
	}
	b, err := s.Data()
	if err != nil || len(b) < 20 || string(b[12:18]) != "NixOS\x00" || f.ByteOrder.Uint32(b[8:]) != 0x63a86cb6 {
		t.Fatalf("note %q: %v", b, err)
	}
	n := f.ByteOrder.Uint32(b[4:])
	for _, ph := range f.Progs {
		mapped = mapped || ph.Type == elf.PT_NOTE && ph.Vaddr == s.Addr && ph.Off == s.Offset && ph.Filesz == s.Size
	}
	return string(b[20 : 20+n]), s.Flags&elf.SHF_ALLOC != 0, mapped, true
}

// TestBuildResolutionCache follows NixOS patchelf's own tests of the note
// (build-resolution-cache*.sh): the descriptor names where each NEEDED
// library is found in the run path ("=PATH"), or "?DIR" for a directory
// only the loader can search ($ORIGIN, glibc-hwcaps); it is allocated and
// mapped by a PT_NOTE; building again changes nothing; an edit of the run
// path or of the NEEDED set drops it (and zeroes its bytes), a no-op edit
// keeps it; a different note is refused; nothing to resolve is a warning;
// --force-rpath is refused; readelf reads the notes and the tables, strip
// rewrites the file, and the program still runs.
func TestBuildResolutionCache(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	readelf := testenv.Tool(t, "readelf", "binutils")
	strip := testenv.Tool(t, "strip", "binutils")
	dir := t.TempDir()
	run := runner(t, dir)
	for _, d := range []string{"libsA", "libsB", "libsC", "hw/glibc-hwcaps"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	w := func(n, s string) { os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644) }
	w("foo.c", "int foo(void){return 4;}\n")
	w("bar.c", "int bar(void){return 2;}\n")
	w("main.c", "int foo(void), bar(void);\nint main(void){return foo()*10+bar()+4;}\n")
	run(gcc, "-shared", "-fPIC", "-o", "libsA/libfoo.so", "foo.c")
	run(gcc, "-shared", "-fPIC", "-o", "libsB/libbar.so", "bar.c")
	run("cp", "libsA/libfoo.so", "libsC/")
	run("cp", "libsA/libfoo.so", "hw/")
	run(gcc, "-o", "main", "main.c", "-LlibsA", "-LlibsB", "-lfoo", "-lbar")
	at := func(d string) string { return filepath.Join(dir, d) }
	fresh := func(name, rpath string) string {
		t.Helper()
		p := at(name)
		run("cp", "main", name)
		edit(t, p, patchelf.SetRunpath(rpath))
		return p
	}
	build := func(p string) *patchelf.Plan {
		t.Helper()
		return edit(t, p, patchelf.BuildResolutionCache())
	}
	runs := func(p string) {
		t.Helper()
		cmd := exec.Command(p)
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+at("libsA")+":"+at("libsB"))
		if err := cmd.Run(); err == nil || cmd.ProcessState.ExitCode() != 46 {
			t.Errorf("%s: %v (want exit status 46)", filepath.Base(p), err)
		}
	}

	p := fresh("main-cached", at("libsA")+":"+at("libsB"))
	build(p)
	want := "libbar.so\x00=" + at("libsB/libbar.so") + "\x00libfoo.so\x00=" + at("libsA/libfoo.so") + "\x00\x00"
	if desc, alloc, mapped, ok := ldcacheNote(t, p); !ok || desc != want || !alloc || !mapped {
		t.Fatalf("note %q (alloc %v, mapped %v, found %v), want %q", desc, alloc, mapped, ok, want)
	}
	if out := run(readelf, "-n", "-S", "-W", p); !strings.Contains(out, "NixOS") || strings.Contains(out, "Warning") {
		t.Errorf("readelf:\n%s", out)
	}
	run(strip, "-o", p+".stripped", p)
	runs(p)
	before, _ := os.ReadFile(p)
	if plan := build(p); plan.Changed {
		t.Errorf("building again changed the file: %+v", plan.Patches)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
		t.Error("building again changed the file's bytes")
	}

	// Edits of the run path or of NEEDED drop it; no-op edits keep it.
	for _, c := range []struct {
		name  string
		e     patchelf.Edit
		drops bool
	}{
		{"set-rpath", patchelf.SetRunpath(at("libsC")), true},
		{"add-rpath", patchelf.AddRunpath(at("libsC")), true},
		{"remove-rpath", patchelf.RemoveRunpath(), true},
		{"shrink-rpath", patchelf.ShrinkRunpath(at("libsC")), true},
		{"add-needed", patchelf.AddNeeded("libm.so.6"), true},
		{"remove-needed", patchelf.RemoveNeeded("libbar.so"), true},
		{"replace-needed", patchelf.ReplaceNeeded("libfoo.so", "libqux.so"), true},
		{"remove-needed (absent)", patchelf.RemoveNeeded("libabsent.so"), false},
		{"replace-needed (absent)", patchelf.ReplaceNeeded("libabsent.so", "libwhatever.so"), false},
		{"set-rpath (same)", patchelf.SetRunpath(at("libsA") + ":" + at("libsB")), false},
	} {
		q := at("main-" + strings.NewReplacer(" ", "", "(", "", ")", "").Replace(c.name))
		run("cp", p, q)
		edit(t, q, c.e)
		_, _, _, ok := ldcacheNote(t, q)
		if ok == c.drops {
			t.Errorf("%s: note kept %v, want %v", c.name, ok, !c.drops)
		}
		if c.drops {
			b, _ := os.ReadFile(q)
			if bytes.Contains(b, []byte("="+at("libsB/libbar.so"))) {
				t.Errorf("%s: the dropped note's paths are still in the file", c.name)
			}
			if out := run(readelf, "-S", "-l", "-W", q); strings.Contains(out, "Warning") || strings.Contains(out, "ldcache") {
				t.Errorf("%s: readelf:\n%s", c.name, out)
			}
			run(strip, "-o", q+".stripped", q)
		}
	}
	// An edit and a rebuild in one call: the new place.
	q := at("main-moved")
	run("cp", p, "main-moved")
	edit(t, q, patchelf.SetRunpath(at("libsC")+":"+at("libsB")), patchelf.BuildResolutionCache())
	if desc, _, _, _ := ldcacheNote(t, q); !strings.Contains(desc, "="+at("libsC/libfoo.so")) {
		t.Errorf("rebuilt note %q", desc)
	}
	runs(q)

	// A note that no longer matches the files is refused.
	run("mv", "libsB/libbar.so", "libsB/libbar.so.away")
	_, err := patchelf.EditFile(p, []patchelf.Edit{patchelf.BuildResolutionCache()}, patchelf.Options{}, patchelf.WriteOptions{})
	run("mv", "libsB/libbar.so.away", "libsB/libbar.so")
	if err == nil || !strings.Contains(err.Error(), "already present; rebuild from an unpatched binary") {
		t.Errorf("a stale note: %v", err)
	}

	// Directories only the loader can search, and DT_RPATH.
	for _, c := range []struct{ rpath, want string }{
		{"$ORIGIN/libsA", "libfoo.so\x00?$ORIGIN/libsA\x00"},
		{at("hw"), "libfoo.so\x00?" + at("hw") + "\x00"},
	} {
		q := fresh("main-hint", c.rpath)
		build(q)
		if desc, _, _, _ := ldcacheNote(t, q); !strings.Contains(desc, c.want) || strings.Contains(desc, "=") {
			t.Errorf("run path %s: note %q", c.rpath, desc)
		}
	}
	q = at("main-rpath")
	run("cp", "main", "main-rpath")
	if _, err := patchelf.EditFile(q, []patchelf.Edit{patchelf.SetRunpath(at("libsA"))}, patchelf.Options{ForceRPath: true}, patchelf.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	build(q)
	if desc, _, _, _ := ldcacheNote(t, q); !strings.Contains(desc, "="+at("libsA/libfoo.so")) {
		t.Errorf("DT_RPATH: note %q", desc)
	}

	// Nothing to resolve: a warning, no note; --force-rpath: refused.
	q = at("main-norpath")
	run("cp", "main", "main-norpath")
	plan := build(q)
	if _, _, _, ok := ldcacheNote(t, q); ok || len(plan.Warnings) != 1 || !strings.Contains(plan.Warnings[0], "no DT_NEEDED entries or run path to resolve; no cache written") {
		t.Errorf("no run path: note %v, warnings %q", ok, plan.Warnings)
	}
	_, err = patchelf.EditFile(q, []patchelf.Edit{patchelf.BuildResolutionCache()}, patchelf.Options{ForceRPath: true}, patchelf.WriteOptions{})
	var pe *patchelf.Error
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "cannot be combined with --force-rpath") {
		t.Errorf("--force-rpath: %v", err)
	}
}
