package check

import (
	"cmp"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/finding"
)

// TestRelTo: the shortcut for paths the walk joined to a clean root gives
// what making both absolute and taking filepath.Rel gives, for those and
// for every other shape of root and path.
func TestRelTo(t *testing.T) {
	roots := []string{"/usr/lib", "/usr/lib/", "/", "/usr//lib", "/usr/lib/../lib", "lib", "./lib", "lib/..", "/usr/li"}
	paths := []string{"/usr/lib/libz.so.1", "/usr/lib/x/y/libz.so", "/usr/lib", "/usr/lib/", "/usr/libexec/a",
		"/usr/lib/..foo", "/usr/lib/.hidden", "/usr/lib/./a", "/usr/lib//a", "/usr/lib/a/../b", "/usr/lib/a/",
		"/opt/a", "lib/a", "./lib/b", "/usr/li/a", "/usr/lib/..", "/usr/lib/../lib2/a"}
	for _, root := range roots {
		for _, p := range paths {
			if got, want := relTo(root, p), relAbs(root, p); got != want {
				t.Errorf("relTo(%q, %q) = %q, want %q", root, p, got, want)
			}
		}
	}
}

// TestSortFindingsOrder: findings come out ordered by file, rule ID,
// symbol, library, version and message, equal ones in their input order,
// whatever the order the files' groups come in.
func TestSortFindingsOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	pick := func(s ...string) string { return s[rng.Intn(len(s))] }
	for round := 0; round < 50; round++ {
		var fs []finding.Finding
		for g := rng.Intn(30); g >= 0; g-- {
			file := pick("/usr/lib/a-b/x.so", "/usr/lib/a/x.so", "/usr/lib/a.so", "/usr/lib/libz.so.1", "/opt/rocm/lib/libamdhip64.so.5", "")
			for n := rng.Intn(5); n >= 0; n-- {
				fs = append(fs, finding.Finding{File: file, ID: pick("RD1001", "RD1002", "RD1201"), Symbol: pick("", "a", "b"),
					Library: pick("", "libc.so.6"), Version: pick("", "GLIBC_2.34"), Message: pick("m", "n"), Fix: fmt.Sprint(len(fs))})
			}
		}
		want := slices.Clone(fs)
		slices.SortStableFunc(want, func(a, b finding.Finding) int {
			return cmp.Or(strings.Compare(a.File, b.File), strings.Compare(a.ID, b.ID), strings.Compare(a.Symbol, b.Symbol),
				strings.Compare(a.Library, b.Library), strings.Compare(a.Version, b.Version), strings.Compare(a.Message, b.Message))
		})
		if got := sortFindings(fs); !slices.EqualFunc(got, want, func(a, b finding.Finding) bool { return a.File == b.File && a.Fix == b.Fix }) {
			t.Fatalf("round %d: sorted\n%v\nwant\n%v", round, got, want)
		}
	}
}
