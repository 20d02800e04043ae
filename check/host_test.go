package check_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/check"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/rpath"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

// TestPythonExtensionInCheck: the cryptography package's Rust extension
// (_rust.abi3.so, which has a SONAME) leaves the Py* API undefined. check
// reports those references as RD1006 notes (a Python extension module),
// not RD1001 errors, and binding it in the interpreter, as its fix says,
// resolves every one of them.
func TestPythonExtensionInCheck(t *testing.T) {
	ext := testenv.File(t, "/usr/lib/python3/dist-packages/cryptography/hazmat/bindings/_rust.abi3.so", "python3-cryptography")
	python := testenv.File(t, "/usr/bin/python3", "python3")
	rep, err := check.Run(context.Background(), []string{filepath.Dir(ext)}, check.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	rootsChecked(t, rep, filepath.Dir(ext))
	notes := 0
	for _, f := range rep.Findings {
		if f.File != ext {
			continue
		}
		switch f.ID {
		case "RD1006":
			notes++
		case "RD1001":
			t.Errorf("undefined symbol of a Python extension reported as an error: %s", f.Message)
		}
	}
	if notes == 0 {
		t.Errorf("no RD1006 for %s (its Py* references): %+v", ext, rep.Findings)
	}
	b := symcheck.NewBinder(rpath.New(rpath.Options{}))
	res, err := b.BindInHost(context.Background(), python, ext, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 0 || res.Bound == 0 {
		t.Errorf("in %s: %d bound, findings %+v", python, res.Bound, res.Findings)
	}
}
