package patchelf_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
)

// --shrink-rpath keeps the absolute run-path directories that hold a
// NEEDED library of the file's class and machine (a directory with only an
// i386 copy goes, an empty one goes), and every relative or $ORIGIN entry;
// --allowed-rpath-prefixes also drops the absolute ones outside the
// prefixes. A directory is searched as ld.so and patchelf search it,
// "dir/name" uncleaned: <tree>/link/../lib, with link -> real/bin, holds
// libother.so though <tree>/lib does not exist (filepath.Join's cleaning
// dropped that entry, and the program no longer started). NixOS patchelf
// (Debian's 0.14.3) gives the same run paths, and the real loader runs the
// result.
func TestShrinkRPath(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	p := func(rel string) string { return filepath.Join(dir, rel) }
	cc := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	for _, d := range []string{"a", "b", "c", "real/bin", "real/lib"} {
		os.MkdirAll(p(d), 0o755)
	}
	os.WriteFile(p("need.c"), []byte("int need(void){return 1;}\n"), 0o644)
	os.WriteFile(p("other.c"), []byte("int other(void){return 2;}\n"), 0o644)
	os.WriteFile(p("main.c"), []byte("int need(void), other(void);\nint main(void){return need()+other()==3?0:1;}\n"), 0o644)
	cc("-shared", "-fPIC", "-o", p("a/libneed.so"), p("need.c"), "-Wl,-soname,libneed.so")
	cc("-shared", "-fPIC", "-o", p("real/lib/libother.so"), p("other.c"), "-Wl,-soname,libother.so")
	i386, err := os.ReadFile(testenv.Testdata("libi386.so"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p("c/libneed.so"), i386, 0o755)
	if err := os.Symlink("real/bin", p("link")); err != nil {
		t.Fatal(err)
	}
	rp := strings.Join([]string{p("a"), p("b"), p("c"), "$ORIGIN/x", "rel", p("link") + "/../lib"}, ":")
	cc("-o", p("prog"), p("main.c"), "-L"+p("a"), "-lneed", "-L"+p("real/lib"), "-lother", "-Wl,--enable-new-dtags,-rpath,"+rp)

	cases := []struct {
		name    string
		allowed []string
		want    string
	}{
		{"all", nil, strings.Join([]string{p("a"), "$ORIGIN/x", "rel", p("link") + "/../lib"}, ":")},
		{"allowed", []string{p("a")}, strings.Join([]string{p("a"), "$ORIGIN/x", "rel"}, ":")},
	}
	nix, _ := exec.LookPath("patchelf")
	if nix == "" {
		testenv.Missing(t, "patchelf (NixOS patchelf, to compare with)", "apt-get install patchelf")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, _ := os.ReadFile(p("prog"))
			ours := filepath.Join(t.TempDir(), "prog")
			os.WriteFile(ours, b, 0o755)
			edit(t, ours, patchelf.Edit{Kind: patchelf.KindShrinkRPath, Allowed: c.allowed})
			if got := read(t, ours).rpath; got != c.want {
				t.Errorf("RUNPATH %q, want %q", got, c.want)
			}
			if out, err := exec.Command(ours).CombinedOutput(); c.name == "all" && err != nil {
				t.Errorf("the shrunk program does not run: %v %s", err, out)
			}
			if nix == "" {
				return
			}
			theirs := filepath.Join(t.TempDir(), "prog")
			os.WriteFile(theirs, b, 0o755)
			args := []string{"--shrink-rpath"}
			if len(c.allowed) > 0 {
				args = append(args, "--allowed-rpath-prefixes", strings.Join(c.allowed, ":"))
			}
			if out, err := exec.Command(nix, append(args, theirs)...).CombinedOutput(); err != nil {
				t.Fatalf("patchelf %v: %v %s", args, err, out)
			}
			if got, want := read(t, ours).rpath, read(t, theirs).rpath; got != want {
				t.Errorf("RUNPATH %q, NixOS patchelf's %q", got, want)
			}
		})
	}
}
