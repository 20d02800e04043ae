package rpath_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// TestWarnDamagedCache: an ld.so.cache that cannot be parsed is worked
// around (the search goes on without it) and Warn hears of it once per
// FileCache, however many resolvers share it and however often they
// resolve; a missing cache is no warning.
func TestWarnDamagedCache(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "ld.so.cache")
	if err := os.WriteFile(cache, []byte("glibc-ld.so.cache1.1"), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	opts := rpath.Options{CachePath: cache, HWCaps: []string{}, DefaultDirs: []string{dir}, Files: rpath.NewFileCache(),
		Warn: func(msg string) { got = append(got, msg) }}
	lib := testenv.Testdata("libfoo.so.1")
	for range 2 {
		r := rpath.New(opts)
		for range 2 {
			if _, err := r.Resolve(context.Background(), lib); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(got) != 1 || !strings.HasPrefix(got[0], cache+": ") || !strings.HasSuffix(got[0], "; searched the directories of ld.so.conf instead") {
		t.Errorf("warnings %q, want one about %s", got, cache)
	}
	got = nil
	opts.CachePath, opts.Files = filepath.Join(dir, "missing"), nil
	if _, err := rpath.New(opts).Resolve(context.Background(), lib); err != nil || len(got) != 0 {
		t.Errorf("missing cache: %v, warnings %q", err, got)
	}
}
