package rpath_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// TestSharedFileCacheReadsHostFilesOnce: resolvers sharing a FileCache (a
// scan's workers) read the ld.so.cache and the C library's version once
// between them, and a resolver with a cache of its own reads them afresh.
// Each file is changed after the first resolver has read it: the second
// resolver sharing the cache still sees what the first read.
func TestSharedFileCacheReadsHostFilesOnce(t *testing.T) {
	tr := newTree(t)
	a := tr.lib("a/libA.so", "libA.so", `int a(void){return 1;}`)
	b := tr.lib("b/libA.so", "libA.so", `int a(void){return 2;}`)
	app := tr.exe("app", `int main(void){return 0;}`, "-L"+tr.path("a"), "-Wl,--no-as-needed", "-lA")
	cache := tr.path("ld.so.cache")
	writeCache := func(target string) {
		t.Helper()
		img := writeNewCache([]entry{{name: "libA.so", path: target, flags: 0x0303, hwcap: -1}}, nil)
		if err := os.WriteFile(cache, img, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	libc := filepath.Join(tr.path("c"), "libc.so.6")
	writeLibc := func(minor string) {
		t.Helper()
		os.Remove(libc) // a new inode: nothing of the old one is reused
		tr.lib("c/libc.so.6", "libc.so.6", `const char banner[] = "GNU C Library (test) stable release version 2.`+minor+`.";`)
	}
	writeCache(a)
	writeLibc("31")
	opts := rpath.Options{CachePath: cache, HWCaps: []string{}, DefaultDirs: []string{tr.path("c")}}
	opts.Files = rpath.NewFileCache()
	libAOf := func(r *rpath.Resolver) string {
		t.Helper()
		res, err := r.Resolve(context.Background(), app)
		if err != nil {
			t.Fatal(err)
		}
		d := depOf(t, res, "libA.so")
		if d.Rule != rpath.RuleCache {
			t.Fatalf("libA.so found by %s, want the cache", d.Rule)
		}
		return d.Path
	}
	first := rpath.New(opts)
	h := resolve(t, opts, app).Root.Header
	if got := libAOf(first); got != a {
		t.Fatalf("first resolver: libA.so is %s, want %s", got, a)
	}
	if v := rpath.GlibcMinorFor(first, h); v != 31 {
		t.Fatalf("first resolver: glibc 2.%d, want 2.31", v)
	}
	writeCache(b)
	writeLibc("35")
	second := rpath.New(opts)
	if got := libAOf(second); got != a {
		t.Errorf("second resolver sharing the FileCache: libA.so is %s, want %s (the cache the first one read)", got, a)
	}
	if v := rpath.GlibcMinorFor(second, h); v != 31 {
		t.Errorf("second resolver sharing the FileCache: glibc 2.%d, want 2.31 (the version the first one read)", v)
	}
	opts.Files = nil
	fresh := rpath.New(opts)
	if got := libAOf(fresh); got != b {
		t.Errorf("resolver with its own FileCache: libA.so is %s, want %s", got, b)
	}
	if v := rpath.GlibcMinorFor(fresh, h); v != 35 {
		t.Errorf("resolver with its own FileCache: glibc 2.%d, want 2.35", v)
	}
}

// TestTriedListsOwnTheirEntries: the candidates each dependency tried are
// its own (the lists are cut from one block), and appending to one list
// leaves the next dependency's untouched.
func TestTriedListsOwnTheirEntries(t *testing.T) {
	tr := newTree(t)
	var args []string
	for _, n := range []string{"A", "B", "C"} {
		tr.lib("lib/lib"+n+".so", "lib"+n+".so", "int f"+n+"(void){return 1;}")
		args = append(args, "-l"+n)
	}
	app := tr.exe("app", `int main(void){return 0;}`, append([]string{"-L" + tr.path("lib"), "-Wl,--no-as-needed"}, args...)...)
	opts := hermetic()
	opts.LDLibraryPath = []string{tr.path("none1"), tr.path("none2"), tr.path("lib")}
	res := resolve(t, opts, app)
	var deps []*rpath.Dep
	for _, d := range res.Root.Deps {
		if strings.HasPrefix(d.Name, "lib") && len(d.Name) == len("libA.so") {
			deps = append(deps, d)
		}
	}
	if len(deps) != 3 {
		t.Fatalf("dependencies %v, want libA.so, libB.so, libC.so", res.Root.Needed)
	}
	check := func() {
		t.Helper()
		for _, d := range deps {
			if len(d.Tried) != 3 {
				t.Fatalf("%s tried %v, want two absent directories and the found one", d.Name, d.Tried)
			}
			for i, a := range d.Tried {
				want := "absent"
				if i == 2 {
					want = "found"
				}
				if filepath.Base(a.Path) != d.Name || a.Result != want {
					t.Errorf("%s: attempt %d is %s (%s), want %s of %s", d.Name, i, a.Path, a.Result, want, d.Name)
				}
			}
		}
	}
	check()
	deps[0].Tried = append(deps[0].Tried, rpath.Attempt{Path: "/added/by/caller", Result: "absent"})
	deps[0].Tried = deps[0].Tried[:3]
	check()
}
