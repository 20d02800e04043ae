package rpath_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// lddEntry is one "name => path" line of ldd; Path is "" for "not found".
type lddEntry struct{ Name, Path string }

var lddLine = regexp.MustCompile(`^\s*(\S+) => (not found|(\S+) \(0x[0-9a-f]+\))`)

// ldd runs the real loader in trace mode (tests only) and returns its
// "=>" lines in order.
func ldd(path string, env []string) ([]lddEntry, error) {
	cmd := exec.Command("ldd", path)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		return nil, fmt.Errorf("ldd: %v", err)
	}
	var got []lddEntry
	for _, l := range strings.Split(string(out), "\n") {
		m := lddLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		got = append(got, lddEntry{Name: m[1], Path: m[3]})
	}
	return got, nil
}

// compareWithLdd resolves path with opts and compares each ldd line with
// the resolver's flat list: same names, same paths, same order.
func compareWithLdd(path string, opts rpath.Options, env []string) error {
	want, err := ldd(path, env)
	if err != nil {
		return err
	}
	res, err := rpath.New(opts).Resolve(context.Background(), path)
	if err != nil {
		return fmt.Errorf("resolve: %v", err)
	}
	var got []lddEntry
	for _, e := range res.Flat() {
		if e.Rule == rpath.RuleInterp {
			continue // ldd prints the loader without "=>"
		}
		got = append(got, lddEntry{Name: e.Name, Path: e.Path})
	}
	if fmt.Sprint(got) == fmt.Sprint(want) {
		return nil
	}
	// ldd lists objects in load order too; report a set difference to help.
	index := func(xs []lddEntry) map[string]string {
		m := map[string]string{}
		for _, x := range xs {
			m[x.Name] = x.Path
		}
		return m
	}
	w, g := index(want), index(got)
	var diffs []string
	for n, p := range w {
		if gp, ok := g[n]; !ok || gp != p {
			diffs = append(diffs, fmt.Sprintf("%s: ldd %q, rocmdoctor %q", n, p, gp))
		}
	}
	for n, p := range g {
		if _, ok := w[n]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: rocmdoctor %q, not in ldd", n, p))
		}
	}
	sort.Strings(diffs)
	if len(diffs) == 0 {
		return fmt.Errorf("same entries, different order: ldd %v, rocmdoctor %v", want, got)
	}
	return fmt.Errorf("%s", strings.Join(diffs, "; "))
}
