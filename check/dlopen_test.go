package check_test

import (
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

// TestDlopenRealLoader: a library names in its .rodata four libraries it
// dlopen()s, two of them declared in its .note.dlopen too: one in a
// directory on its own RUNPATH, one nowhere, one only on the RUNPATH of the
// program that loads it (which dlopen() from the library does not search:
// a DT_RUNPATH applies to the object's own loads), and libm.so.6 through
// the cache; and two absolute paths (as a Nix build patches them in), one
// to the plugin and one to nothing. The program calls dlopen() in the
// library for each, and the
// ones the real loader fails to open are exactly the ones check reports:
// by note (RD1008, with the note's priority as severity) or, for one no
// note declares, by string (RD1010).
func TestDlopenRealLoader(t *testing.T) {
	dir, write, run := testenv.GCCDir(t)
	for _, d := range []string{"lib", "plugins", "other", "bin"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	write("caller.c", `#include <dlfcn.h>
#include "dlopen_note.h"
DLOPEN_NOTE(plug, "[{\"feature\":\"plug\",\"priority\":\"required\",\"soname\":[\"libplug.so.1\"]}]");
DLOPEN_NOTE(opt, "[{\"feature\":\"opt\",\"priority\":\"suggested\",\"soname\":[\"libopt.so.2\"]}]");
static const char *const names[] = { "libplug.so.1", "libopt.so.2", "libother.so.1", "libm.so.6", PLUGPATH, GONEPATH };
int try_load(int i) { return dlopen(names[i], RTLD_NOW) != 0; }
const char *name_of(int i) { return names[i]; }
`)
	write("plug.c", "int plug(void){return 1;}\n")
	write("prog.c", `#include <stdio.h>
int try_load(int); const char *name_of(int);
int main(void){ for (int i = 0; i < 6; i++) printf("%s %d\n", name_of(i), try_load(i)); return 0; }
`)
	plugPath, gonePath := filepath.Join(dir, "plugins", "libplug.so.1"), filepath.Join(dir, "gone", "libgone.so.3")
	run("-O1", "-fPIC", "-shared", "-I"+testenv.Testdata("src"), "-o", "lib/libcaller.so", "caller.c",
		`-DPLUGPATH="`+plugPath+`"`, `-DGONEPATH="`+gonePath+`"`,
		"-Wl,-soname,libcaller.so", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../plugins")
	run("-O1", "-fPIC", "-shared", "-o", "plugins/libplug.so.1", "plug.c", "-Wl,-soname,libplug.so.1")
	run("-O1", "-fPIC", "-shared", "-o", "other/libother.so.1", "plug.c", "-Wl,-soname,libother.so.1")
	run("-O1", "-o", "bin/prog", "prog.c", "lib/libcaller.so", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib:$ORIGIN/../other")

	out, err := exec.Command(filepath.Join(dir, "bin", "prog")).Output()
	if err != nil {
		t.Fatalf("prog: %v", err)
	}
	var failed []string
	for line := range strings.Lines(string(out)) {
		if name, ok := strings.CutSuffix(strings.TrimSpace(line), " 0"); ok {
			failed = append(failed, name)
		}
	}
	if want := []string{"libopt.so.2", "libother.so.1", gonePath}; !slices.Equal(failed, want) {
		t.Fatalf("the loader failed to open %q, the test expects %q:\n%s", failed, want, out)
	}

	rep, err := check.Run(context.Background(), []string{filepath.Join(dir, "lib")}, check.Options{DlopenStrings: true})
	if err != nil {
		t.Fatal(err)
	}
	byRule := map[string][]string{}
	sev := map[string]finding.Severity{}
	for _, f := range rep.Findings {
		if f.ID == "RD1008" || f.ID == "RD1010" {
			byRule[f.ID] = append(byRule[f.ID], f.Library)
			if f.ID == "RD1008" {
				sev[f.Library] = f.Severity
			}
			continue
		}
		t.Errorf("unexpected finding %s %s", f.ID, f.Message)
	}
	if got := slices.Sorted(slices.Values(append(byRule["RD1008"], byRule["RD1010"]...))); !slices.Equal(got, slices.Sorted(slices.Values(failed))) {
		t.Errorf("RD1008 and RD1010 name %q; the loader failed on %q", got, failed)
	}
	if !slices.Equal(byRule["RD1008"], []string{"libopt.so.2"}) || !slices.Equal(slices.Sorted(slices.Values(byRule["RD1010"])), slices.Sorted(slices.Values([]string{"libother.so.1", gonePath}))) {
		t.Errorf("RD1008 %q, RD1010 %q: want the declared one by its note only, the other by its string", byRule["RD1008"], byRule["RD1010"])
	}
	if sev["libopt.so.2"] != finding.SeverityNote {
		t.Errorf("severities %v: want the note's priority (suggested: note)", sev)
	}

	// Without --dlopen-strings, the notes only.
	rep, err = check.Run(context.Background(), []string{filepath.Join(dir, "lib")}, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range rep.Findings {
		if f.ID == "RD1010" {
			t.Errorf("RD1010 without DlopenStrings: %s", f.Message)
		}
		if f.ID == "RD1008" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d RD1008 findings without DlopenStrings, want 1", n)
	}
}

// TestDlopenConfig: dlopen_strings in the config turns RD1010 on, and an
// ignore by soname drops one library's findings.
func TestDlopenConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), ".rocmdoctor.toml")
	os.WriteFile(cfg, []byte("dlopen_strings = true\n[[ignore]]\nsoname = \"libdlwanted.so.*\"\n"), 0o644)
	var opts check.Options
	if _, err := check.LoadConfig(cfg, &opts); err != nil {
		t.Fatal(err)
	}
	if !opts.DlopenStrings {
		t.Fatal("dlopen_strings = true did not set DlopenStrings")
	}
	rep, err := check.Run(context.Background(), []string{testenv.Testdata("checktree", "lib", "libdlopener.so")}, opts)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range rep.Findings {
		ids = append(ids, f.ID+" "+f.Library)
	}
	if want := []string{"RD1010 libdlname.so.3"}; !slices.Equal(ids, want) {
		t.Errorf("findings %q, want %q (RD1008 for libdlwanted.so.1 ignored)", ids, want)
	}
	os.WriteFile(cfg, []byte("dlopen_strings = \"yes\"\n"), 0o644)
	if _, err := check.LoadConfig(cfg, &check.Options{}); err == nil {
		t.Error("dlopen_strings = \"yes\" accepted")
	}
}

// TestDlopenComgrCorpus is the HIP runtime in a prefix of its own:
// Debian's libamdhip64.so.5 has no NEEDED entry for the code-object
// manager and dlopen()s "libamd_comgr.so.2" (Debian's package depends on
// libamd-comgr2 for that reason). In a sysroot where comgr is not on its
// search path, check --dlopen-strings says so; with comgr there, not.
func TestDlopenComgrCorpus(t *testing.T) {
	testenv.Corpus(t)
	hip := testenv.File(t, "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5", "libamdhip64-5")
	comgr := testenv.File(t, "/usr/lib/x86_64-linux-gnu/libamd_comgr.so.2", "libamd-comgr2")
	root := t.TempDir()
	lib := filepath.Join(root, "usr", "lib", "x86_64-linux-gnu")
	os.MkdirAll(lib, 0o755)
	place := func(src, name string) {
		t.Helper()
		real, err := filepath.EvalSymlinks(src)
		if err != nil {
			t.Fatal(err)
		}
		if os.Link(real, filepath.Join(lib, name)) == nil {
			return
		}
		b, err := os.ReadFile(real)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(lib, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	place(hip, "libamdhip64.so.5")
	comgrFindings := func() []string {
		t.Helper()
		opts := check.Options{DlopenStrings: true}
		opts.Resolver.Root = root
		rep, err := check.Run(context.Background(), []string{filepath.Join(lib, "libamdhip64.so.5")}, opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range rep.Findings {
			if f.ID == "RD1010" && f.Library == "libamd_comgr.so.2" {
				out = append(out, f.Message)
			}
		}
		return out
	}
	if got := comgrFindings(); len(got) != 1 {
		t.Fatalf("without comgr in the root: %d RD1010 findings for libamd_comgr.so.2, want 1", len(got))
	}
	place(comgr, "libamd_comgr.so.2")
	if got := comgrFindings(); len(got) != 0 {
		t.Fatalf("with comgr in the root: %q", got)
	}
}
