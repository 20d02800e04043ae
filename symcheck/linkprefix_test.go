package symcheck_test

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

// sameForPrefix checks that reading paths for the names starting with
// prefix (what check's LLVMInitialize* diagnosis reads of an archive)
// finds what the full read finds of those names.
// It returns how many such names were referenced or defined.
func sameForPrefix(t *testing.T, paths []string, prefix string) (names int) {
	t.Helper()
	full, err := symcheck.CheckLinkInputs(context.Background(), paths)
	if err != nil {
		t.Fatal(err)
	}
	only, err := symcheck.CheckLinkInputsOnly(context.Background(), paths, prefix)
	if err != nil {
		t.Fatal(err)
	}
	want := &symcheck.StaticResult{Objects: full.Objects, Unresolved: map[string][]string{}, Defined: map[string]bool{}}
	for n, by := range full.Unresolved {
		if strings.HasPrefix(n, prefix) {
			want.Unresolved[n] = by
		}
	}
	for n := range full.Defined {
		if strings.HasPrefix(n, prefix) {
			want.Defined[n] = true
		}
	}
	only.Satisfied = 0 // counts only the names read
	if !reflect.DeepEqual(only, want) {
		t.Errorf("%v, names %s*: %d objects, %d unresolved, %d defined; the full read: %d, %d, %d",
			paths, prefix, only.Objects, len(only.Unresolved), len(only.Defined), want.Objects, len(want.Unresolved), len(want.Defined))
	}
	return len(want.Unresolved) + len(want.Defined)
}

func TestLinkInputsForAPrefix(t *testing.T) {
	rock := testenv.Testdata("librockCompiler.a")
	if n := sameForPrefix(t, []string{rock}, "LLVMInitialize"); n == 0 {
		t.Error("librockCompiler.a: no LLVMInitialize* name read")
	}
	sameForPrefix(t, []string{rock, testenv.Testdata("libgnu.a"), testenv.Testdata("archive_a.o")}, "")
	// A shared library on the line is read by Open (its dynamic symbols).
	sameForPrefix(t, []string{testenv.Testdata("libthin.a"), testenv.Testdata("be.o"), testenv.Testdata("libfoo.so.1")}, "f")
}

// TestCorpusLinkInputsForAPrefix: the same over LLVM's static archives,
// each alone, as check reads them.
func TestCorpusLinkInputsForAPrefix(t *testing.T) {
	testenv.Corpus(t)
	dir := filepath.Dir(testenv.File(t, "/usr/lib/llvm-15/lib/libLLVMX86CodeGen.a", "llvm-15-dev"))
	archives, _ := filepath.Glob(filepath.Join(dir, "libLLVM*.a"))
	names := 0
	for _, a := range archives {
		names += sameForPrefix(t, []string{a}, "LLVMInitialize")
	}
	if names < 100 {
		t.Errorf("%d LLVMInitialize* names referenced or defined in %d archives: LLVM 15 defines some 250", names, len(archives))
	}
}
