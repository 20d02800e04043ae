package rpath_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// TestResolveEach: results come in the order of the paths, each as a
// resolver of its own would give it, a path that cannot be resolved comes
// with its error, and an error from fn stops the work and is returned.
func TestResolveEach(t *testing.T) {
	good := testenv.Testdata("libfoo.so.1")
	bad := filepath.Join(t.TempDir(), "not-elf.so")
	os.WriteFile(bad, []byte("no ELF here"), 0o644)
	var paths []string
	for i := range 40 {
		if i%7 == 3 {
			paths = append(paths, bad)
		} else {
			paths = append(paths, good)
		}
	}
	want, err := rpath.New(rpath.Options{}).Resolve(context.Background(), good)
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	err = rpath.ResolveEach(context.Background(), rpath.Options{}, paths, 3, func(i int, res *rpath.Result, err error) error {
		if i != next {
			t.Fatalf("result %d came as number %d", i, next)
		}
		next++
		if paths[i] == bad {
			if err == nil || !strings.Contains(err.Error(), bad) {
				t.Errorf("%d: error %v", i, err)
			}
			return nil
		}
		if err != nil || len(res.Objects) != len(want.Objects) || res.Objects[len(res.Objects)-1].Path != want.Objects[len(want.Objects)-1].Path {
			t.Errorf("%d: %v %+v", i, err, res)
		}
		return nil
	})
	if err != nil || next != len(paths) {
		t.Fatalf("ResolveEach: %v after %d", err, next)
	}
	stop := errors.New("stop")
	var calls atomic.Int32
	err = rpath.ResolveEach(context.Background(), rpath.Options{}, paths, 2, func(i int, _ *rpath.Result, _ error) error {
		calls.Add(1)
		if i == 5 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls.Load() != 6 {
		t.Errorf("stopped with %v after %d calls", err, calls.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := rpath.ResolveEach(ctx, rpath.Options{}, paths, 2, func(int, *rpath.Result, error) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestResolveEachBoundsItsLead: while fn holds the first result, the
// workers resolve at most 32 paths each beyond it, not the whole list.
func TestResolveEachBoundsItsLead(t *testing.T) {
	src, err := os.ReadFile(testenv.Testdata("libfoo.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var paths []string
	for i := range 300 {
		p := filepath.Join(dir, fmt.Sprintf("lib%d.so", i))
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	files := rpath.NewFileCache()
	var parsed atomic.Int32
	files.OnParse(func(f *elfx.File) {
		if filepath.Dir(f.Path) == dir {
			parsed.Add(1)
		}
	}, false)
	const workers = 2
	err = rpath.ResolveEach(context.Background(), rpath.Options{Files: files}, paths, workers, func(i int, _ *rpath.Result, err error) error {
		if i != 0 {
			return nil
		}
		// Hold the first result until the workers stop.
		for last := int32(-1); last != parsed.Load(); time.Sleep(50 * time.Millisecond) {
			last = parsed.Load()
		}
		if n := parsed.Load(); n > 32*workers {
			t.Errorf("%d paths resolved while fn held the first, want at most %d", n, 32*workers)
		}
		return err
	})
	if err != nil || parsed.Load() != int32(len(paths)) {
		t.Errorf("ResolveEach: %v, %d of %d parsed", err, parsed.Load(), len(paths))
	}
}
