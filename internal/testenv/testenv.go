// Package testenv lets tests depend on tools and data that may be missing:
// outside CI such a test skips with a message naming what is missing; with
// ROCMDOCTOR_REQUIRE_ALL=1 (the CI tier) it fails instead.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// RequireAll reports whether missing tools and data must fail tests.
func RequireAll() bool { return os.Getenv("ROCMDOCTOR_REQUIRE_ALL") == "1" }

// Missing skips or fails t because what is not available; hint says how to
// get it (e.g. the Debian package).
func Missing(t testing.TB, what, hint string) {
	t.Helper()
	msg := what + " is not available"
	if hint != "" {
		msg += " (" + hint + ")"
	}
	if RequireAll() {
		t.Fatalf("%s; ROCMDOCTOR_REQUIRE_ALL=1 makes this a failure", msg)
	}
	t.Skip(msg)
}

// Tool returns the path of an executable, or skips/fails when absent.
func Tool(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "tool "+name, "apt-get install "+pkg)
	}
	return p
}

// File returns path when it exists, or skips/fails naming the package.
func File(t testing.TB, path, pkg string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		Missing(t, path, "apt-get install "+pkg)
	}
	return path
}

// Short skips t in -short mode (the CI tier never runs with -short).
func Short(t testing.TB, why string) {
	t.Helper()
	if testing.Short() && !RequireAll() {
		t.Skip("-short: " + why)
	}
}

// Testdata returns the absolute path of a file in the repository's testdata.
func Testdata(elem ...string) string {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "testdata")
	return filepath.Join(append([]string{root}, elem...)...)
}
