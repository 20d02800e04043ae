package elfx_test

import (
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// BenchmarkDynamicSymbolsLLVM reads libLLVM-15's 46k dynamic symbols with versions.
func BenchmarkDynamicSymbolsLLVM(b *testing.B) {
	path := testenv.File(b, "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1", "libllvm15")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		f, err := elfx.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.DynamicSymbols(); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkArchiveIndexLLVMCodeGen reads the member table and symbol index
// of the largest LLVM archive.
func BenchmarkArchiveIndexLLVMCodeGen(b *testing.B) {
	path := testenv.File(b, "/usr/lib/llvm-15/lib/libLLVMCodeGen.a", "llvm-15-dev")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		a, err := elfx.OpenArchive(path)
		if err != nil {
			b.Fatal(err)
		}
		a.Close()
	}
}

// BenchmarkEachObjectSymbolLLVMCodeGen reads the LLVMInitialize* names of
// every member of the largest LLVM archive, as check's diagnosis does.
func BenchmarkEachObjectSymbolLLVMCodeGen(b *testing.B) {
	path := testenv.File(b, "/usr/lib/llvm-15/lib/libLLVMCodeGen.a", "llvm-15-dev")
	p, err := elfx.OpenProbe(path)
	if err != nil {
		b.Fatal(err)
	}
	a, err := p.ArchiveMembers()
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		found := 0
		for m := range a.Members {
			sr, err := a.Open(m)
			if err != nil {
				b.Fatal(err)
			}
			if !elfx.EachObjectSymbol(sr, sr.Size(), "LLVMInitialize", func(elfx.ObjectSymbol) { found++ }) {
				b.Fatalf("member %d not plain", m)
			}
		}
		if found == 0 {
			b.Fatal("no LLVMInitialize* symbol in libLLVMCodeGen.a")
		}
	}
}
