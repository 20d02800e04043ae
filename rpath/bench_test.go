package rpath_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// BenchmarkResolveComgr resolves libamd_comgr.so.2's closure (libLLVM-15
// and 17 libraries) with a fresh resolver each time.
func BenchmarkResolveComgr(b *testing.B) {
	p := testenv.File(b, "/usr/lib/x86_64-linux-gnu/libamd_comgr.so.2", "libamd-comgr2")
	for i := 0; i < b.N; i++ {
		if _, err := rpath.New(rpath.Options{}).Resolve(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResolveRocsparseWarm resolves librocsparse.so.0 (1.3 GB) with a
// warm resolver: headers come from the (device, inode) cache.
func BenchmarkResolveRocsparseWarm(b *testing.B) {
	p := testenv.File(b, "/usr/lib/x86_64-linux-gnu/librocsparse.so.0", "librocsparse0")
	r := rpath.New(rpath.Options{})
	for i := 0; i < b.N; i++ {
		if _, err := r.Resolve(context.Background(), p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseCache: every command that resolves reads the host's
// ld.so.cache first.
func BenchmarkParseCache(b *testing.B) {
	data, err := os.ReadFile("/etc/ld.so.cache")
	if err != nil {
		b.Skip("no /etc/ld.so.cache")
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := rpath.ParseCache(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResolveEachPrefix resolves every regular *.so* file of
// /usr/lib/x86_64-linux-gnu, as `deps` does with a prefix on its command
// line: one worker against one per CPU (ResolveEach's default), which
// must pay for the goroutines (docs/performance.md).
func BenchmarkResolveEachPrefix(b *testing.B) {
	paths := prefixLibraries(b)
	for _, bc := range []struct {
		name    string
		workers int
	}{{"workers=1", 1}, {"workers=GOMAXPROCS", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				err := rpath.ResolveEach(context.Background(), rpath.Options{}, paths, bc.workers, func(int, *rpath.Result, error) error { return nil })
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func prefixLibraries(tb testing.TB) []string {
	dir := "/usr/lib/x86_64-linux-gnu"
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Skip(err)
	}
	var out []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.Contains(e.Name(), ".so") {
			out = append(out, dir+"/"+e.Name())
		}
	}
	if len(out) < 50 {
		tb.Skipf("%d libraries in %s", len(out), dir)
	}
	return out
}
