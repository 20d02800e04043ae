package symcheck_test

import (
	"context"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

func benchSymbols(b *testing.B, paths []string, opts symcheck.SymbolsOptions) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := symcheck.Symbols(context.Background(), paths, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSymbolsComgr binds libamd_comgr.so.2 against its closure
// (libLLVM-15 with 46k symbols); the target is ≤ 0.5× ldd -r.
func BenchmarkSymbolsComgr(b *testing.B) {
	p := testenv.File(b, "/usr/lib/x86_64-linux-gnu/libamd_comgr.so.2", "libamd-comgr2")
	benchSymbols(b, []string{p}, symcheck.SymbolsOptions{})
}

// BenchmarkSymbolsRocsparse binds the 1.3 GB librocsparse.so.0.
func BenchmarkSymbolsRocsparse(b *testing.B) {
	p := testenv.File(b, "/usr/lib/x86_64-linux-gnu/librocsparse.so.0", "librocsparse0")
	benchSymbols(b, []string{p}, symcheck.SymbolsOptions{})
}

// BenchmarkIndexLLVM indexes all of /usr/lib/llvm-15/lib (189 archives,
// ~1 GB) through the archive symbol indexes, for the seed case's names.
func BenchmarkIndexLLVM(b *testing.B) {
	testenv.File(b, "/usr/lib/llvm-15/lib/libLLVMX86CodeGen.a", "llvm-15-dev")
	want := map[string]bool{}
	for _, n := range x86Five {
		want[n] = true
	}
	for i := 0; i < b.N; i++ {
		if _, err := symcheck.BuildIndex(context.Background(), []string{"/usr/lib/llvm-15/lib"}, want); err != nil {
			b.Fatal(err)
		}
	}
}
