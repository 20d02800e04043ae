// Package clitest runs rocmdoctor commands in-process for the command
// packages' tests, with captured output streams.
package clitest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
)

// Testdata is the repository's testdata directory as seen from a command
// package (cmd/internal/NAME).
const Testdata = "../../../testdata/"

// Run runs rocmdoctor with args and returns its exit status, standard output
// and standard error.
func Run(args ...string) (code int, out, errOut string) {
	io, _, o, e := cli.Test()
	code = root.Run(io, args)
	return code, o.String(), e.String()
}

// InSysroot copies the testdata file name to rel inside a new temporary
// sysroot and returns the sysroot and the copy's path.
func InSysroot(t testing.TB, name, rel string) (root, inside string) {
	t.Helper()
	root = t.TempDir()
	inside = filepath.Join(root, rel)
	b, err := os.ReadFile(Testdata + name)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(inside), 0o755)
	}
	if err == nil {
		err = os.WriteFile(inside, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	return root, inside
}

// DamagedCacheSysroot is InSysroot for the testdata file name at rel with
// an etc/ld.so.cache that is not one; it returns the sysroot, the copy's
// path and the cache's.
func DamagedCacheSysroot(t testing.TB, name, rel string) (root, inside, cache string) {
	t.Helper()
	root, inside = InSysroot(t, name, rel)
	cache = filepath.Join(root, "etc", "ld.so.cache")
	err := os.MkdirAll(filepath.Dir(cache), 0o755)
	if err == nil {
		err = os.WriteFile(cache, []byte("not a cache"), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	return root, inside, cache
}
