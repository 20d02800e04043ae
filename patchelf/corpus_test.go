package patchelf_test

import (
	"debug/elf"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
)

// TestCorpusEditsKeepLibrariesLoadable is the CI tier: every shared library
// under /usr/lib/x86_64-linux-gnu (plus libLLVM-15 and libamdhip64), on a
// copy, gets a longer RUNPATH, a replaced and an added NEEDED and a new
// SONAME in one call (each must then be visible), then a still longer
// RUNPATH in a second call; readelf -a must not warn and the library must
// still load with the real loader (a dlopen harness). Debian's patchelf
// gets the same calls on separate copies, and where it fails and
// rocmdoctor does not is reported (0.14.3 fails on all of them: the
// combined call leaves a wrong RUNPATH, NixOS/patchelf#193). A third copy
// of each, stripped of its section headers (as sstrip leaves a file),
// gets the same edits and must load too. The 32-bit libraries of
// /usr/lib32 (gcc-multilib's) go through the same, loaded by a 32-bit
// harness: the Elf32 layout is written by the same code.
func TestCorpusEditsKeepLibrariesLoadable(t *testing.T) {
	testenv.Corpus(t)
	gcc := testenv.Tool(t, "gcc", "gcc")
	readelf := testenv.Tool(t, "readelf", "binutils")
	pe := testenv.Tool(t, "patchelf", "patchelf")
	for p, pkg := range map[string]string{"/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1": "libllvm15", "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5": "libamdhip64-5"} {
		testenv.File(t, p, pkg)
	}
	testenv.File(t, "/usr/lib32/libstdc++.so.6", "gcc-multilib")
	testenv.GCC32(t) // the 32-bit harness
	dir := t.TempDir()
	// A dlopen harness for each class.
	harnessFor := func(name string, flags ...string) string {
		h := filepath.Join(dir, name)
		os.WriteFile(h+".c", []byte("#include <dlfcn.h>\n#include <stdio.h>\nint main(int c,char**v){void*h=dlopen(v[1],RTLD_LAZY|RTLD_LOCAL);if(!h){fprintf(stderr,\"%s\\n\",dlerror());return 1;}return 0;}\n"), 0o644)
		if out, err := exec.Command(gcc, append(flags, "-o", h, h+".c", "-ldl")...).CombinedOutput(); err != nil {
			t.Fatalf("harness %s: %v %s", name, err, out)
		}
		return h
	}
	harness := map[elf.Machine]string{elf.EM_X86_64: harnessFor("dl"), elf.EM_386: harnessFor("dl32", "-m32")}
	libs := map[string]string{} // library → the harness that loads it
	n32 := 0
	for _, root := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib32"} {
		for _, p := range testenv.ELFFiles(t, root) {
			f, err := elfx.Open(p)
			if err != nil {
				continue
			}
			interp, _ := f.Interp()
			d, derr := f.Dynamic()
			h := harness[f.Machine]
			ok := derr == nil && f.Type == elf.ET_DYN && h != "" && interp == "" && len(d.Needed) > 0 &&
				strings.Contains(filepath.Base(p), ".so")
			f.Close()
			// The loader itself, libc and plugins that need a host program
			// cannot be dlopened in isolation.
			if ok && exec.Command(h, p).Run() == nil {
				libs[p] = h
				if h == harness[elf.EM_386] {
					n32++
				}
			}
		}
	}
	type result struct {
		ours, theirs, stripped error
	}
	var mu sync.Mutex
	res := map[string]result{}
	ch := make(chan string)
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for p := range ch {
				h := libs[p]
				r := result{ours: editOne(p, filepath.Join(dir, fmt.Sprintf("ours-%d", w)), h, readelf, ""),
					theirs:   editOne(p, filepath.Join(dir, fmt.Sprintf("theirs-%d", w)), h, readelf, pe),
					stripped: editOne(p, filepath.Join(dir, fmt.Sprintf("stripped-%d", w)), h, readelf, stripSections)}
				mu.Lock()
				res[p] = r
				mu.Unlock()
			}
		}(w)
	}
	for _, p := range slices.Sorted(maps.Keys(libs)) {
		ch <- p
	}
	close(ch)
	wg.Wait()
	passed, theirFails := 0, 0
	paths := slices.Sorted(maps.Keys(res))
	for _, p := range paths {
		r := res[p]
		if r.ours != nil {
			t.Errorf("%s: %v", p, r.ours)
			continue
		}
		if r.stripped != nil {
			t.Errorf("%s without section headers: %v", p, r.stripped)
			continue
		}
		passed++
		if r.theirs != nil {
			// A few examples; the count follows.
			if theirFails++; theirFails <= 5 {
				t.Logf("Debian's patchelf fails on %s where rocmdoctor passes: %v", p, r.theirs)
			}
		}
	}
	t.Logf("edited %d of %d loadable libraries (%d of them 32-bit), with and without section headers: readelf clean and loadable after the edits; Debian's patchelf failed on %d of them", passed, len(res), n32, theirFails)
	switch {
	case len(res) < 100 || (n32 < 15 && testenv.Runs32()):
		t.Errorf("only %d libraries in the corpus, %d of them 32-bit", len(res), n32)
	case !testenv.Runs32():
		t.Log("this kernel does not execute 32-bit x86 programs (no IA32 emulation): no 32-bit library can be loaded to check the edits, so none is counted")
	}
}

// editsVisible checks that the file has the RUNPATH, NEEDED entries and
// SONAME that the combined edit asked for.
func editsVisible(path, rpath, first, added string) error {
	f, err := elfx.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	d, err := f.Dynamic()
	if err != nil {
		return err
	}
	got := d.RunPath
	if !d.HasRunPath {
		got = d.RPath
	}
	if got != rpath {
		return fmt.Errorf("run path is %q after the combined edit, want %q", got, rpath)
	}
	if d.Soname != "librocmdoctor-test-renamed.so.1" {
		return fmt.Errorf("SONAME is %q after the combined edit", d.Soname)
	}
	if !slices.Contains(d.Needed, first) || !slices.Contains(d.Needed, added) {
		return fmt.Errorf("NEEDED %v after the combined edit, want %s and %s", d.Needed, first, added)
	}
	return nil
}

// stripSections as editOne's patchelfBin: our edits on a copy without
// section headers.
const stripSections = "(strip section headers)"

func editOne(src, dir, harness, readelf, patchelfBin string) error {
	os.MkdirAll(dir, 0o755)
	dst := filepath.Join(dir, filepath.Base(src))
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if patchelfBin == stripSections {
		testenv.StripSectionHeaders(b)
		patchelfBin = ""
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		return err
	}
	defer os.Remove(dst)
	f, err := elfx.Open(dst)
	if err != nil {
		return err
	}
	d, _ := f.Dynamic()
	first := d.Needed[0]
	orig := d.RunPath
	if !d.HasRunPath {
		orig = d.RPath
	}
	f.Close()
	// The original's directory first, so that siblings it needs (gconv
	// modules' helpers) still resolve from the copy.
	orig = strings.ReplaceAll(strings.ReplaceAll(orig, "${ORIGIN}", filepath.Dir(src)), "$ORIGIN", filepath.Dir(src))
	if orig != "" {
		orig += ":"
	}
	rpath := orig + filepath.Dir(src) + ":/opt/rocm-6.2.2/lib:/opt/rocm-6.2.2/llvm/lib:/nix/store/0123456789abcdefghijklmnopqrstuv-rocm/lib"
	// Replace the first NEEDED by itself through a symlink name that exists
	// in the same directory, and add one that is already loaded.
	alias := "libc.so.6"
	if first == alias {
		alias = "libm.so.6"
	}
	if patchelfBin == "" {
		_, err = patchelf.EditFile(dst, []patchelf.Edit{
			{Kind: patchelf.KindSetRPath, Arg: rpath},
			{Kind: patchelf.KindReplaceNeeded, Arg: first, Arg2: first},
			{Kind: patchelf.KindAddNeeded, Arg: alias},
			{Kind: patchelf.KindSetSoname, Arg: "librocmdoctor-test-renamed.so.1"},
		}, patchelf.Options{}, patchelf.WriteOptions{})
	} else {
		out, perr := exec.Command(patchelfBin, "--set-rpath", rpath, "--replace-needed", first, first, "--add-needed", alias,
			"--set-soname", "librocmdoctor-test-renamed.so.1", dst).CombinedOutput()
		if perr != nil {
			err = fmt.Errorf("patchelf: %v %s", perr, out)
		}
	}
	if err != nil {
		return err
	}
	// Every edit of the combined call is visible (patchelf 0.14.3 writes
	// the replace-needed name as the RUNPATH when both are given:
	// NixOS/patchelf#193).
	if err := editsVisible(dst, rpath, first, alias); err != nil {
		return err
	}
	// A second growing edit: where the first left .dynstr at the end of
	// the file, ours extends it in place.
	rpath2 := rpath + ":/opt/rocm-6.3.0/lib/grown/by/a/second/edit"
	if patchelfBin == "" {
		_, err = patchelf.EditFile(dst, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: rpath2}}, patchelf.Options{}, patchelf.WriteOptions{})
	} else if out, perr := exec.Command(patchelfBin, "--set-rpath", rpath2, dst).CombinedOutput(); perr != nil {
		err = fmt.Errorf("patchelf (second edit): %v %s", perr, out)
	}
	if err != nil {
		return err
	}
	cmd := exec.Command(readelf, "-a", "-W", dst)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("readelf: %v %s", err, stderr.String())
	}
	if w := stderr.String(); strings.Contains(w, "Warning") || strings.Contains(w, "Error") {
		return fmt.Errorf("readelf warns: %s", strings.SplitN(w, "\n", 2)[0])
	}
	if out, err := exec.Command(harness, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("does not load: %v %s", err, out)
	}
	return nil
}

// TestCorpusRenameInLibLLVM renames C API functions in libLLVM-15 (46k
// dynamic symbols, GNU hash only) and calls the renamed
// LLVMContextCreate/LLVMContextDispose through dlopen/dlsym.
func TestCorpusRenameInLibLLVM(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	src := testenv.File(t, "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1", "libllvm15")
	dir := t.TempDir()
	lib := filepath.Join(dir, "libLLVM-15.so.1")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(lib, b, 0o755)
	renames := map[string]string{"LLVMContextCreate": "rocm_LLVMContextCreate", "LLVMContextDispose": "rocm_LLVMContextDispose",
		"LLVMInitializeX86Target": "rocm_LLVMInitializeX86Target"}
	if _, err := patchelf.EditFile(lib, []patchelf.Edit{{Kind: patchelf.KindRenameDynamicSymbols, Renames: renames}}, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	h := filepath.Join(dir, "h")
	os.WriteFile(h+".c", []byte(`#include <dlfcn.h>
#include <stdio.h>
int main(int c, char **v) {
  void *h = dlopen(v[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  void *(*create)(void) = dlsym(h, "rocm_LLVMContextCreate");
  void (*dispose)(void *) = dlsym(h, "rocm_LLVMContextDispose");
  if (!create || !dispose || dlsym(h, "LLVMContextCreate") || !dlsym(h, "LLVMModuleCreateWithName")) { fprintf(stderr, "lookup\n"); return 1; }
  void *ctx = create();
  dispose(ctx);
  printf("ok %d\n", ctx != 0);
  return 0;
}
`), 0o644)
	if out, err := exec.Command(gcc, "-o", h, h+".c", "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("harness: %v %s", err, out)
	}
	if out, err := exec.Command(h, lib).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "ok 1" {
		t.Fatalf("renamed libLLVM: %v %s", err, out)
	}
}
