package patchelf_test

import (
	"fmt"
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
	edits := []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: long}}
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
		if _, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: long}}, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFittingEditInPlace is an edit that fits, written into
// librocsparse.so.0 (1.3 GB) itself with --in-place semantics: each
// iteration sets a RUNPATH of the same length as the last (a one-byte
// .dynstr write, then fsync), so its cost must not depend on the size of
// the file (issue 5: ≤ 10 ms; scripts/bench-patchelf.sh times the command).
func BenchmarkFittingEditInPlace(b *testing.B) {
	src := testenv.File(b, "/usr/lib/x86_64-linux-gnu/librocsparse.so.0", "librocsparse0")
	p := copyFile(b, src)
	// librocsparse has no RUNPATH: the first edit grows the file.
	wo := patchelf.WriteOptions{InPlace: true}
	if _, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: "/opt/rocm/lib"}}, patchelf.Options{}, wo); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		plan, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: fmt.Sprintf("/opt/rocm/li%d", i%2)}}, patchelf.Options{}, wo)
		if err != nil {
			b.Fatal(err)
		}
		if plan.AppendSize != 0 || len(plan.Patches) != 1 {
			b.Fatalf("the edit did not fit: %d patches, %d bytes appended", len(plan.Patches), plan.AppendSize)
		}
	}
}
