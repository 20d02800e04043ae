package rpath_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// An executable reached through a symlinked directory: $ORIGIN is where
// the directory really is, as ld.so computes it, both the first time
// (directory resolved) and the second (remembered by the shared cache).
func TestOriginThroughSymlinkedDirectory(t *testing.T) {
	tr := newTree(t)
	tr.lib("lib/libdep.so.1", "libdep.so.1", libdep)
	tr.exe("real/bin/app", usesDep, "-L"+tr.path("lib"), "-l:libdep.so.1",
		"-Wl,--enable-new-dtags,-rpath,$ORIGIN/../../lib")
	tr.exe("real/bin/app2", usesDep, "-L"+tr.path("lib"), "-l:libdep.so.1",
		"-Wl,--enable-new-dtags,-rpath,$ORIGIN/../../lib")
	if err := os.MkdirAll(tr.path("a/b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(tr.path("real/bin"), tr.path("a/b/bin")); err != nil {
		t.Fatal(err)
	}
	opts := hermetic()
	opts.Files = rpath.NewFileCache()
	for _, exe := range []string{"a/b/bin/app", "a/b/bin/app2", "a/b/bin/../bin/app"} {
		d := depOf(t, resolve(t, opts, tr.path(exe)), "libdep.so.1")
		if d.Missing() {
			t.Errorf("%s: libdep.so.1 missing; $ORIGIN did not follow the directory symlink", exe)
		}
		if out, err := exec.Command(tr.path(exe)).CombinedOutput(); err != nil {
			t.Errorf("%s: the real loader fails: %v %s", exe, err, out)
		}
	}
}

// Prime hands an open file to the resolver: resolving it afterwards uses
// what was read then, not the file on disk (here truncated to garbage, so
// a second open would fail).
func TestPrimeAvoidsReopening(t *testing.T) {
	tr := newTree(t)
	tr.lib("lib/libdep.so.1", "libdep.so.1", libdep)
	app := tr.exe("bin/app", usesDep, "-L"+tr.path("lib"), "-l:libdep.so.1",
		"-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib")
	orig, err := os.ReadFile(app)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elfx.Open(app)
	if err != nil {
		t.Fatal(err)
	}
	r := rpath.New(hermetic())
	if err := r.Prime(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.WriteFile(app, []byte("not an ELF file any more"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := r.Resolve(context.Background(), app)
	if err != nil {
		t.Fatalf("resolving a primed file opened it again: %v", err)
	}
	if d := depOf(t, res, "libdep.so.1"); d.Missing() {
		t.Errorf("libdep.so.1 missing after Prime")
	}
	// Without Prime the same file is an error.
	if _, err := rpath.New(hermetic()).Resolve(context.Background(), app); err == nil {
		t.Errorf("an unprimed resolver accepted a non-ELF file")
	}
	mem, err := elfx.NewFile(bytes.NewReader(orig))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Prime(mem); err == nil {
		t.Errorf("Prime accepted a File that was not opened from a path")
	}
}

// Resolvers working in parallel share one cache (run with -race).
func TestFileCacheConcurrent(t *testing.T) {
	tr := newTree(t)
	tr.lib("lib/libdep.so.1", "libdep.so.1", libdep)
	var apps []string
	for _, n := range []string{"a", "b", "c", "d"} {
		apps = append(apps, tr.exe("bin/"+n, usesDep, "-L"+tr.path("lib"), "-l:libdep.so.1",
			"-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib"))
	}
	opts := hermetic()
	opts.Files = rpath.NewFileCache()
	resolveAll(t, opts, apps, func(a string, res *rpath.Result) {
		for _, o := range res.Objects {
			for _, d := range o.Deps {
				if d.Name == "libdep.so.1" && d.Path != tr.path("lib/libdep.so.1") {
					t.Errorf("%s: libdep.so.1 resolved to %s", a, d.Path)
				}
			}
		}
	})
}

// resolveAll has four resolvers made from opts resolve every program of
// apps at the same time, and hands each result to check (called from
// their goroutines).
func resolveAll(t *testing.T, opts rpath.Options, apps []string, check func(app string, res *rpath.Result)) {
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rpath.New(opts)
			for _, a := range apps {
				res, err := r.Resolve(context.Background(), a)
				if err != nil {
					t.Error(err)
					return
				}
				check(a, res)
			}
		}()
	}
	wg.Wait()
}

// Resolvers sharing a cache parse each file once, whatever the path it is
// reached through (here lib/libdep.so.1 also as alias/libdep.so.1, through
// a symlinked directory), and hand it to OnParse once; a file that fails
// to parse is tried again by whoever needs it next rather than waited on
// for ever.
func TestFileCacheParsesEachFileOnce(t *testing.T) {
	tr := newTree(t)
	tr.lib("lib/libdep.so.1", "libdep.so.1", libdep)
	if err := os.Symlink(tr.path("lib"), tr.path("alias")); err != nil {
		t.Fatal(err)
	}
	// Linked against a stub; the loader would find garbage in lib/.
	tr.lib("stub/libbad.so.1", "libbad.so.1", "int bad(void) { return 0; }")
	var apps []string
	for i, n := range []string{"a", "b", "c", "d", "e", "f"} {
		dir := "$ORIGIN/../lib"
		if i%2 == 1 {
			dir = "$ORIGIN/../alias"
		}
		apps = append(apps, tr.exe("bin/"+n, usesDep, "-L"+tr.path("lib"), "-l:libdep.so.1",
			"-L"+tr.path("stub"), "-Wl,--no-as-needed", "-l:libbad.so.1", "-Wl,--enable-new-dtags,-rpath,"+dir))
	}
	if err := os.WriteFile(tr.path("lib/libbad.so.1"), []byte("\x7fELF garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := hermetic()
	opts.Files = rpath.NewFileCache()
	var mu sync.Mutex
	parses := map[elfx.FileID][]string{}
	opts.Files.OnParse(func(f *elfx.File) {
		mu.Lock()
		defer mu.Unlock()
		id := elfx.IDOf(f.FileInfo())
		parses[id] = append(parses[id], f.Path)
	}, false)
	ids := make(chan elfx.FileID, 64)
	resolveAll(t, opts, apps, func(a string, res *rpath.Result) {
		d := findDep(res, "libdep.so.1")
		if d == nil || d.Missing() {
			t.Errorf("%s: libdep.so.1 missing", a)
			return
		}
		ids <- d.Object.ID()
		if bad := findDep(res, "libbad.so.1"); bad == nil || !bad.Missing() {
			t.Errorf("%s: the garbage libbad.so.1 was accepted (or not needed)", a)
		}
	})
	close(ids)
	lib := elfx.IDOf(statOf(t, tr.path("lib/libdep.so.1")))
	for id := range ids {
		if id != lib {
			t.Errorf("libdep.so.1's ID %v, want the inode of lib/libdep.so.1 %v", id, lib)
		}
	}
	// The programs, libdep, and the system's libc and loader.
	if len(parses[lib]) == 0 || len(parses) < len(apps)+1 {
		t.Errorf("OnParse saw %d files, want the %d programs and libdep at least: %v", len(parses), len(apps), parses)
	}
	for id, paths := range parses {
		if strings.Contains(paths[0], "libbad") {
			t.Errorf("OnParse was handed the garbage %s", paths[0])
		}
		if len(paths) != 1 {
			t.Errorf("file %v parsed %d times: %v", id, len(paths), paths)
		}
	}
}

func statOf(t *testing.T, p string) os.FileInfo {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// findDep is depOf for other goroutines than the test's: nil when absent.
func findDep(res *rpath.Result, name string) *rpath.Dep {
	for _, o := range res.Objects {
		for _, d := range o.Deps {
			if d.Name == name {
				return d
			}
		}
	}
	return nil
}
