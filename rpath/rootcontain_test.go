package rpath_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/patchelf"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// Under a sysroot nothing of this machine's is taken for the root's: a
// NEEDED entry that is a relative path is looked for from the root's "/"
// (ld.so takes it from the process's working directory, which is not
// rocmdoctor's), and a RUNPATH whose '..' climbs past the root as a string
// stays in it. A decoy library sits where the host's working directory
// and lexical cleaning lead: it must be neither found nor shown.
func TestSysrootContainsRelativePaths(t *testing.T) {
	tr := newTree(t)
	decoy := tr.lib("decoy/libdecoy.so", "libdecoy.so", `int decoy(void){return 1;}`)
	root := filepath.Join(tr.dir, "root")
	os.MkdirAll(filepath.Join(root, "opt/app/lib"), 0o755)
	wd, _ := os.Getwd()
	up := strings.Repeat("../", strings.Count(wd, "/"))
	rel := up + strings.TrimPrefix(decoy, "/") // from this test's directory: the decoy
	if _, err := os.Stat(rel); err != nil {
		t.Fatalf("the relative name does not reach the decoy from here: %v", err)
	}
	climb := "$ORIGIN/" + strings.Repeat("../", 12) + strings.TrimPrefix(filepath.Dir(decoy), "/")
	prog := tr.exe("root/opt/app/app", `int main(void){return 0;}`, "-Wl,--no-as-needed", decoy, "-Wl,--enable-new-dtags,-rpath,"+climb)
	if _, err := patchelf.EditFile(prog, []patchelf.Edit{{Kind: patchelf.KindReplaceNeeded, Arg: "libdecoy.so", Arg2: rel}}, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	res := resolve(t, rpath.Options{Root: root}, prog)
	d := depOf(t, res, rel)
	if d.Path != "" {
		t.Errorf("the relative NEEDED entry resolved to %s, outside the root", d.Path)
	}
	var deps []*rpath.Dep
	for _, o := range res.Objects {
		deps = append(deps, o.Deps...)
	}
	for _, dep := range deps {
		for _, a := range append(dep.Tried, dep.Rejected...) {
			real, err := rpath.RealInRoot(root, a.Path)
			// (Shown as tried, '..' and all; what it names is inside.)
			if err != nil || !strings.HasPrefix(filepath.Clean(real), root+"/") {
				t.Errorf("%s: tried %s (%s), outside the root", dep.Name, a.Path, real)
			}
		}
		if dep.Path != "" && !strings.HasPrefix(dep.Path, root+"/") {
			t.Errorf("%s shown as %s, outside the root", dep.Name, dep.Path)
		}
	}
}
