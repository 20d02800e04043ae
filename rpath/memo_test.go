package rpath_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// closureJSON is everything a Result says about its objects and their
// dependencies (paths, rules, candidates tried and rejected).
func closureJSON(t testing.TB, res *rpath.Result) string {
	t.Helper()
	b, err := json.Marshal(res.Objects)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRememberedSearchReplayed: a Resolver replays the searches it has
// made (a library's NEEDED entries, resolved again in every closure that
// holds it) and gets what a fresh one gets, including when a candidate
// was a loaded object in the closure the search was made for and is not
// in the next one.
func TestRememberedSearchReplayed(t *testing.T) {
	tr := newTree(t)
	lib := tr.path("lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	// libY.so has no SONAME, so the loader knows it only by the names it
	// was loaded under; libY2.so is the same file under another name.
	tr.run("-shared", "-fPIC", "-o", filepath.Join(lib, "libY.so"), "-x", "c", "/dev/null")
	if err := os.Link(filepath.Join(lib, "libY.so"), filepath.Join(lib, "libY2.so")); err != nil {
		t.Fatal(err)
	}
	tr.lib("lib/libX.so", "libX.so", `int x(void){return 0;}`, "-L"+lib, "-Wl,--no-as-needed", "-lY2", "-Wl,--enable-new-dtags,-rpath,$ORIGIN")
	// app1 loads libY.so first: libX's libY2.so is then that object (same
	// inode). app2 loads only libX.so: libY2.so is a new object.
	app1 := tr.exe("app1", `int main(void){return 0;}`, "-L"+lib, "-Wl,--no-as-needed", "-lY", "-lX", "-Wl,--enable-new-dtags,-rpath,"+lib)
	app2 := tr.exe("app2", `int main(void){return 0;}`, "-L"+lib, "-Wl,--no-as-needed", "-lX", "-Wl,--enable-new-dtags,-rpath,"+lib)
	// app3's libX.so has the same DT_RUNPATH ($ORIGIN) in another
	// directory, where libY2.so is another file.
	lib3 := tr.path("lib3")
	tr.lib("lib3/libY2.so", "libY2.so", `int y3(void){return 3;}`)
	tr.lib("lib3/libX.so", "libX.so", `int x(void){return 0;}`, "-L"+lib3, "-Wl,--no-as-needed", "-lY2", "-Wl,--enable-new-dtags,-rpath,$ORIGIN")
	app3 := tr.exe("app3", `int main(void){return 0;}`, "-L"+lib3, "-Wl,--no-as-needed", "-lX", "-Wl,--enable-new-dtags,-rpath,"+lib3)
	// libW.so has no search path of its own: its libZ.so comes from the
	// DT_RPATH of the program, a/ for appA and b/ for appB.
	tr.lib("a/libZ.so", "libZ.so", `int z(void){return 1;}`)
	tr.lib("b/libZ.so", "libZ.so", `int z(void){return 2;}`)
	tr.lib("w/libW.so", "libW.so", `int w(void){return 0;}`, "-L"+tr.path("a"), "-Wl,--no-as-needed", "-lZ")
	appA := tr.exe("appA", `int main(void){return 0;}`, "-L"+tr.path("w"), "-Wl,--no-as-needed", "-lW", "-Wl,--disable-new-dtags,-rpath,"+tr.path("a")+":"+tr.path("w"), "-Wl,-rpath-link,"+tr.path("a"))
	appB := tr.exe("appB", `int main(void){return 0;}`, "-L"+tr.path("w"), "-Wl,--no-as-needed", "-lW", "-Wl,--disable-new-dtags,-rpath,"+tr.path("b")+":"+tr.path("w"), "-Wl,-rpath-link,"+tr.path("a"))
	opts := hermetic()
	opts.DefaultDirs = []string{"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64"}
	shared := rpath.New(opts)
	wantPath := map[string][2]string{
		app1: {"libY2.so", filepath.Join(lib, "libY.so")},
		app2: {"libY2.so", filepath.Join(lib, "libY2.so")},
		app3: {"libY2.so", filepath.Join(lib3, "libY2.so")},
		appA: {"libZ.so", tr.path("a/libZ.so")},
		appB: {"libZ.so", tr.path("b/libZ.so")},
	}
	for _, app := range []string{app1, app2, app3, appA, appB, app1, app2, app3, appB, appA} {
		got, err := shared.Resolve(context.Background(), app)
		if err != nil {
			t.Fatal(err)
		}
		want := resolve(t, opts, app)
		if g, w := closureJSON(t, got), closureJSON(t, want); g != w {
			t.Errorf("%s with remembered searches:\n%s\nwith none:\n%s", app, g, w)
		}
		w := wantPath[app]
		if d := depOf(t, got, w[0]); d.Path != w[1] {
			t.Errorf("%s: %s is %q (%s), want %s", filepath.Base(app), w[0], d.Path, d.Rule, w[1])
		}
	}
	if n := rpath.RememberedSearches(shared); n == 0 {
		t.Error("no search was remembered")
	}
}

// TestRememberedSearchesOnCorpus: resolving every library of the system
// directory with one Resolver gives, for each, the closure a Resolver
// that remembers nothing gives.
func TestRememberedSearchesOnCorpus(t *testing.T) {
	testenv.File(t, "/usr/lib/x86_64-linux-gnu/libc.so.6", "libc6")
	files := testenv.ELFFiles(t, "/usr/lib/x86_64-linux-gnu")
	if testing.Short() && len(files) > 200 {
		files = files[:200]
	}
	fc := rpath.NewFileCache()
	shared := rpath.New(rpath.Options{Files: fc})
	compared := 0
	for _, p := range files {
		got, err := shared.Resolve(context.Background(), p)
		want, werr := rpath.New(rpath.Options{Files: fc}).Resolve(context.Background(), p)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%s: error %v with remembered searches, %v without", p, err, werr)
		}
		if err != nil {
			continue
		}
		if g, w := closureJSON(t, got), closureJSON(t, want); g != w {
			t.Fatalf("%s with remembered searches:\n%s\nwith none:\n%s", p, g, w)
		}
		compared++
	}
	if compared < len(files)/2 {
		t.Fatalf("compared %d closures of %d files", compared, len(files))
	}
	if rpath.RememberedSearches(shared) == 0 {
		t.Error("no search was remembered")
	}
}
