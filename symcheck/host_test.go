package symcheck_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/rpath"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

// TestSymbolsInHost: a plugin (no SONAME, no NEEDED on what the program
// provides) binds completely when loaded into its host program, and what
// neither defines stays unresolved — the same answer as the real loader
// when the program dlopen()s the plugin with RTLD_NOW.
func TestSymbolsInHost(t *testing.T) {
	p := testenv.NewPrefix(t)
	dir, build := p.Root, p.CC
	p.Lib("libhost.so", "libhost.so", "int host_fn(void){ return 1; }")
	host := build("host", `#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
	if (!dlopen(argv[1], RTLD_NOW)) { printf("%s\n", dlerror()); return 1; }
	printf("ok\n");
	return 0;
}`, "-L"+dir, "-Wl,--no-as-needed", "-lhost", "-ldl", "-Wl,--enable-new-dtags,-rpath,$ORIGIN")
	// The plugin's own dependency is found through its own RUNPATH.
	p.Lib("plugins/libdep.so", "libdep.so", "int dep_fn(void){ return 2; }")
	good := build("plugins/good.so", "extern int host_fn(void); extern int dep_fn(void); int f(void){ return host_fn() + dep_fn(); }",
		"-shared", "-fPIC", "-L"+filepath.Join(dir, "plugins"), "-ldep", "-Wl,--enable-new-dtags,-rpath,$ORIGIN")
	bad := build("plugins/bad.so", "extern int host_fn(void); extern int nowhere_fn(void); int f(void){ return host_fn() + nowhere_fn(); }",
		"-shared", "-fPIC")

	run := func(plugin, hostProg string) []string {
		t.Helper()
		rep, err := symcheck.Symbols(context.Background(), []string{plugin}, symcheck.SymbolsOptions{
			Host: hostProg, Resolver: rpath.Options{NoCache: true, HWCaps: []string{}}})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Host != hostProg {
			t.Errorf("report's host %q, want %q", rep.Host, hostProg)
		}
		var syms []string
		for _, f := range rep.Findings {
			syms = append(syms, f.Rule+":"+f.Symbol+f.Library)
		}
		return syms
	}
	loader := func(plugin string) string {
		out, _ := exec.Command(host, plugin).CombinedOutput()
		return strings.TrimSpace(string(out))
	}

	if got := run(good, ""); strings.Join(got, " ") != "undefined-symbol:host_fn" {
		t.Errorf("good.so alone: %v, want host_fn undefined", got)
	}
	if got := run(good, host); len(got) != 0 {
		t.Errorf("good.so in its host: %v, want everything bound", got)
	}
	if out := loader(good); out != "ok" {
		t.Errorf("the real loader fails to load good.so into the host: %s", out)
	}
	if got := run(bad, host); strings.Join(got, " ") != "undefined-symbol:nowhere_fn" {
		t.Errorf("bad.so in its host: %v, want only nowhere_fn undefined", got)
	}
	if out := loader(bad); !strings.Contains(out, "nowhere_fn") {
		t.Errorf("the real loader loads bad.so into the host (%q), but nowhere_fn is defined nowhere", out)
	}
	// A library the program already has is bound where it is.
	if got := run(filepath.Join(dir, "libhost.so"), host); len(got) != 0 {
		t.Errorf("libhost.so in its host: %v", got)
	}
	// The host must be able to load the file: a 32-bit library is refused.
	_, err := symcheck.Symbols(context.Background(), []string{testenv.Testdata("libi386.so")}, symcheck.SymbolsOptions{Host: host})
	if err == nil || !strings.Contains(err.Error(), "cannot be loaded into") {
		t.Errorf("a 32-bit library in a 64-bit host: %v", err)
	}
}
