package check_test

import (
	"context"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/check"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// BenchmarkCheckSystemLibs runs every check over /usr/lib/x86_64-linux-gnu.
func BenchmarkCheckSystemLibs(b *testing.B) {
	testenv.File(b, "/usr/lib/x86_64-linux-gnu/libc.so.6", "libc6")
	for i := 0; i < b.N; i++ {
		if _, err := check.Run(context.Background(), []string{"/usr/lib/x86_64-linux-gnu"}, check.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckLLVMArchives runs every check over /usr/lib/llvm-15: its
// 189 static archives are read for the LLVMInitialize* diagnosis.
func BenchmarkCheckLLVMArchives(b *testing.B) {
	testenv.File(b, "/usr/lib/llvm-15/lib/libLLVMCodeGen.a", "llvm-15-dev")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := check.Run(context.Background(), []string{"/usr/lib/llvm-15"}, check.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
