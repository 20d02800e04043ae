package deps

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// The tree names the kind of hwcaps subdirectory a library came from.
func TestTreeHWCapsTags(t *testing.T) {
	lib := func(p string) *rpath.Object { return &rpath.Object{Path: p} }
	root := &rpath.Object{Path: "/app", Deps: []*rpath.Dep{
		{Name: "liba.so", Path: "/d/glibc-hwcaps/x86-64-v3/liba.so", Rule: rpath.RuleRunPath, HWCaps: "x86-64-v3", Object: lib("a")},
		{Name: "libb.so", Path: "/d/tls/x86_64/libb.so", Rule: rpath.RuleRunPath, HWCaps: "tls/x86_64", LegacyHWCaps: true, Object: lib("b")},
		{Name: "libc.so.6", Path: "/lib/libc.so.6", Rule: rpath.RuleCache, Object: lib("c")},
	}}
	var out bytes.Buffer
	(&tree{io: &cli.IOStreams{Out: &out}, seen: map[*rpath.Object]bool{}}).print(root, "", 1)
	for _, want := range []string{
		"liba.so => /d/glibc-hwcaps/x86-64-v3/liba.so [runpath, glibc-hwcaps x86-64-v3]",
		"libb.so => /d/tls/x86_64/libb.so [runpath, legacy hwcaps tls/x86_64]",
		"libc.so.6 => /lib/libc.so.6 [ld.so.cache]",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in:\n%s", want, out.String())
		}
	}
}
