package patchelf_test

import (
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
)

// BenchmarkPlanVerifyLLVM plans and verifies a growing set-rpath on
// libLLVM-15.so.1 (117 MB, 46k dynamic symbols) without writing: the CPU
// part of the edit, which runs while the replacement copy is being made.
func BenchmarkPlanVerifyLLVM(b *testing.B) {
	p := testenv.File(b, "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1", "libllvm15")
	edits := []patchelf.Edit{{Kind: patchelf.SetRPath, Arg: long}}
	b.ReportAllocs()
	for b.Loop() {
		f, err := elfx.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		plan, err := patchelf.PlanFile(f, edits, patchelf.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := plan.Verify(f); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkEditLLVM is the whole default write path on a copy of
// libLLVM-15.so.1: copy, plan, verify, fsync, rename (the target is
// ≤ 0.5× patchelf's time and ≤ 0.1× its RSS; see scripts/bench-patchelf.sh).
func BenchmarkEditLLVM(b *testing.B) {
	src := testenv.File(b, "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1", "libllvm15")
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		p := copyFile(b, src)
		b.StartTimer()
		if _, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.SetRPath, Arg: long}}, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
