package rpath_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// TestLookupAsDlopenRealLoader: dlopen() called from a library searches
// as a NEEDED entry of that library would — its DT_RPATH and then those of
// the objects that loaded it (the program's) when it has no DT_RUNPATH;
// only its own DT_RUNPATH when it has one. The program dlopen()s
// libplug.so.1 (in a directory only the program's DT_RPATH names) from a
// library without run paths and from one with a DT_RUNPATH; the real
// loader finds it from the first only, and Lookup from each library's
// object in the program's closure says the same.
func TestLookupAsDlopenRealLoader(t *testing.T) {
	tr := newTree(t)
	tr.lib("plugins/libplug.so.1", "libplug.so.1", "int plug(void){return 1;}")
	body := `#include <dlfcn.h>
int %s(void){ return dlopen("libplug.so.1", RTLD_NOW) != 0; }`
	tr.lib("lib/libplain.so", "libplain.so", strings.Replace(body, "%s", "from_plain", 1))
	tr.lib("lib/librunpath.so", "librunpath.so", strings.Replace(body, "%s", "from_runpath", 1), "-Wl,--enable-new-dtags,-rpath,$ORIGIN/nothing")
	prog := tr.exe("bin/prog", `#include <stdio.h>
int from_plain(void); int from_runpath(void);
int main(void){ printf("%d %d\n", from_plain(), from_runpath()); return 0; }`,
		tr.path("lib/libplain.so"), tr.path("lib/librunpath.so"), "-Wl,--disable-new-dtags,-rpath,$ORIGIN/../lib:$ORIGIN/../plugins")
	out, err := exec.Command(prog).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "1 0" {
		t.Fatalf("the loader: %q, the test expects dlopen from libplain.so to succeed and from librunpath.so to fail", got)
	}
	r := rpath.New(hermetic())
	res, err := r.Resolve(context.Background(), prog)
	if err != nil {
		t.Fatal(err)
	}
	n := len(res.Objects)
	for _, c := range []struct {
		soname string
		found  bool
	}{{"libplain.so", true}, {"librunpath.so", false}} {
		var obj *rpath.Object
		for _, o := range res.Objects {
			if o.Soname == c.soname {
				obj = o
			}
		}
		if obj == nil {
			t.Fatalf("%s not in the closure", c.soname)
		}
		d := r.Lookup(res, obj, "libplug.so.1")
		if d.Missing() == c.found {
			t.Errorf("dlopen(libplug.so.1) from %s: found %v (%s %s), the loader says %v", c.soname, !d.Missing(), d.Rule, d.Path, c.found)
		}
		if c.found && (d.Rule != rpath.RuleRPath || d.Via != prog) {
			t.Errorf("from %s: rule %s via %q, want the program's rpath", c.soname, d.Rule, d.Via)
		}
	}
	if len(res.Objects) != n {
		t.Errorf("Lookup added to the closure: %d objects, was %d", len(res.Objects), n)
	}
}
