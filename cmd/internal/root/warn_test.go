package root_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/clitest"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
)

// TestDamagedLoaderCacheWarned: every command that resolves libraries
// says, once and after its output, that the sysroot's ld.so.cache could
// not be read and what was searched instead (resolution goes on, as ld.so
// does); a sysroot without a cache, the usual case, gets no warning.
func TestDamagedLoaderCacheWarned(t *testing.T) {
	sys, lib, cache := clitest.DamagedCacheSysroot(t, "libfoo.so.1", "usr/lib/x86_64-linux-gnu/libfoo.so.1")
	want := "rocmdoctor: warning: " + cache + ": "
	tail := "; searched the directories of ld.so.conf instead\n"
	cmds := [][]string{
		{"deps", lib},
		{"symbols", lib},
		{"unwind", lib},
		{"check", filepath.Dir(lib)},
		{"check", "--json", filepath.Dir(lib)},
		{"prefix", filepath.Join(sys, "usr")},
		{"deps", "--json", lib},
		{"symbols", "--json", lib},
		{"unwind", "--json", lib},
		{"prefix", "--json", filepath.Join(sys, "usr")},
	}
	run := func(args []string) (int, string, string) {
		io, _, out, errOut := cli.Test()
		code := root.Run(io, append([]string{args[0], "--root", sys, "--hwcaps", "none", "--fail-on", "never"}, args[1:]...))
		return code, out.String(), errOut.String()
	}
	for _, damage := range [][]byte{[]byte("not a cache at all"), []byte("glibc-ld.so.cache1.1\x00\x00\x00")} {
		if err := os.WriteFile(cache, damage, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range cmds {
			code, out, errOut := run(args)
			if strings.Count(errOut, want) != 1 || !strings.Contains(errOut, tail) || code == 1 {
				t.Errorf("%q with cache %q: exit %d, stderr %q; want one %q…%q", args, damage, code, errOut, want, tail)
			}
			if strings.Contains(out, "warning:") {
				t.Errorf("%q: the warning is on stdout:\n%s", args, out)
			}
			// A JSON document carries it too, once.
			if slices.Contains(args, "--json") {
				if w := jsonWarnings(t, args, out); len(w) != 1 || !strings.HasPrefix(w[0], cache+": ") || !strings.HasSuffix(w[0], strings.TrimSpace(tail)) {
					t.Errorf("%q with cache %q: JSON warnings %q", args, damage, w)
				}
			}
		}
	}
	if err := os.Remove(cache); err != nil {
		t.Fatal(err)
	}
	for _, args := range cmds {
		_, out, errOut := run(args)
		if strings.Contains(errOut, "warning:") {
			t.Errorf("%q without a cache: %q", args, errOut)
		}
		if slices.Contains(args, "--json") && strings.Contains(out, `"warnings"`) {
			t.Errorf("%q without a cache: a warnings field in\n%s", args, out)
		}
	}
}

// jsonWarnings is the top-level "warnings" of a JSON document.
func jsonWarnings(t *testing.T, args []string, out string) []string {
	t.Helper()
	var doc struct{ Warnings []string }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%q: %v\n%s", args, err, out)
	}
	return doc.Warnings
}
