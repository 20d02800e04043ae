package rpath_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// A ".." in a search path is resolved by the kernel where the lookup
// reaches it, after the links before it, not lexically: ld.so passes
// "dir/link/../lib/name" to open() as it is, and takes an object's
// $ORIGIN from the path it opened it by, unresolved. The tree: a program
// with RUNPATH <tree>/link/../lib, where link -> a/real/bin, so the
// loader finds a/real/lib/libdep.so; that library's RUNPATH
// $ORIGIN/../lib2 is <tree>/link/../lib/../lib2, a/real/lib2. Decoys
// without the symbols the program needs lie where lexical cleaning leads
// (<tree>/lib, <tree>/lib2): the real loader runs the program, ldd lists
// the raw paths, and the resolver must find what they find (it said "not
// found" for libdep.so, and would have taken the decoys). Under a sysroot,
// with the link absolute inside it, the same.
func TestDotDotAfterSymlink(t *testing.T) {
	tr := newTree(t)
	tr.lib("a/real/lib2/libdep2.so", "libdep2.so", `int dep2(void){return 5;}`)
	tr.lib("lib2/libdep2.so", "libdep2.so", `int decoy2(void){return 0;}`)
	tr.lib("a/real/lib/libdep.so", "libdep.so", `extern int dep2(void); int dep(void){return dep2()+2;}`,
		"-L"+tr.path("a/real/lib2"), "-ldep2", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib2")
	tr.lib("lib/libdep.so", "libdep.so", `int decoy(void){return 0;}`)
	if err := os.Symlink("a/real/bin", tr.path("link")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(tr.path("a/real/bin"), 0o755)
	prog := tr.exe("prog", `extern int dep(void); int main(void){return dep()==7?0:1;}`,
		"-L"+tr.path("a/real/lib"), "-ldep", "-Wl,--enable-new-dtags,-rpath,"+tr.path("link")+"/../lib")
	if out, err := exec.Command(prog).CombinedOutput(); err != nil {
		t.Fatalf("the real loader does not run the program: %v %s", err, out)
	}
	if err := compareWithLdd(prog, rpath.Options{}, nil); err != nil {
		t.Error(err)
	}
	res := resolve(t, rpath.Options{}, prog)
	dep, dep2 := depOf(t, res, "libdep.so"), depOf(t, res, "libdep2.so")
	if want := tr.path("link") + "/../lib/libdep.so"; dep.Path != want {
		t.Errorf("libdep.so: %q, want %q", dep.Path, want)
	}
	if want := tr.path("link") + "/../lib/../lib2/libdep2.so"; dep2.Path != want {
		t.Errorf("libdep2.so: %q, want %q", dep2.Path, want)
	}
	// Where cleaning names the same file, the cleaned path is shown.
	same := tr.exe("same", `extern int dep(void); int main(void){return dep()==7?0:1;}`,
		"-L"+tr.path("a/real/lib"), "-ldep", "-Wl,--enable-new-dtags,-rpath,"+tr.path("a/real/bin")+"/../lib")
	if d := depOf(t, resolve(t, rpath.Options{}, same), "libdep.so"); d.Path != tr.path("a/real/lib/libdep.so") {
		t.Errorf("no link before the '..': %q, want the cleaned path", d.Path)
	}

	// The same tree in a sysroot, at /dd, the link absolute in the root.
	root := t.TempDir()
	dd := filepath.Join(root, "dd")
	for _, rel := range []string{"a/real/lib2/libdep2.so", "lib2/libdep2.so", "a/real/lib/libdep.so", "lib/libdep.so"} {
		b, err := os.ReadFile(tr.path(rel))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dd, rel)), 0o755)
		os.WriteFile(filepath.Join(dd, rel), b, 0o755)
	}
	os.MkdirAll(filepath.Join(dd, "a/real/bin"), 0o755)
	if err := os.Symlink("/dd/a/real/bin", filepath.Join(dd, "link")); err != nil {
		t.Fatal(err)
	}
	rootProg := tr.exe("rootprog", `extern int dep(void); int main(void){return dep()==7?0:1;}`,
		"-L"+tr.path("a/real/lib"), "-ldep", "-Wl,--enable-new-dtags,-rpath,/dd/link/../lib")
	b, _ := os.ReadFile(rootProg)
	os.WriteFile(filepath.Join(dd, "prog"), b, 0o755)
	res = resolve(t, rpath.Options{Root: root, NoCache: true}, filepath.Join(dd, "prog"))
	for name, want := range map[string]string{"libdep.so": "/dd/a/real/lib/libdep.so", "libdep2.so": "/dd/a/real/lib2/libdep2.so"} {
		d := depOf(t, res, name)
		if d.Missing() || d.Object == nil || !strings.HasSuffix(d.Object.FilePath(), want) {
			var file string
			if d.Object != nil {
				file = d.Object.FilePath()
			}
			t.Errorf("sysroot: %s at %q (file %q), want the root's %s", name, d.Path, file, want)
		}
	}
}
