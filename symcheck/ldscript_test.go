package symcheck_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

// TestLinkInputsFollowLinkerScripts: among link inputs, a GNU ld script
// stands for the files it names, found as the linker finds them (here
// beside it, by name and by -l, through a script naming a script); a
// name it cannot find is an error naming the script; a script alone is
// refused with what it stands for.
func TestLinkInputsFollowLinkerScripts(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"libgnu.a", "archive_a.o"} {
		b, err := os.ReadFile(testenv.Testdata(n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, n), b, 0o644)
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	obj := filepath.Join(dir, "archive_a.o")
	want, err := symcheck.CheckLinkInputs(context.Background(), []string{obj, filepath.Join(dir, "libgnu.a")})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := want.Unresolved["b_func"]; ok || len(want.Unresolved) != 1 {
		t.Fatalf("with the archive itself: unresolved %v", want.Unresolved)
	}
	for _, script := range []string{
		write("libx.so", "/* GNU ld script */\nOUTPUT_FORMAT(elf64-x86-64)\nINPUT ( libgnu.a )\n"),
		write("liby.so", "GROUP ( -lgnu )"),
		write("libz.so", "INPUT(liby.so)"),
	} {
		got, err := symcheck.CheckLinkInputs(context.Background(), []string{obj, script})
		if err != nil {
			t.Fatalf("%s: %v", script, err)
		}
		if !reflect.DeepEqual(got.Unresolved, want.Unresolved) || got.Objects != want.Objects {
			t.Errorf("%s: %d objects, unresolved %v; want %d, %v", script, got.Objects, got.Unresolved, want.Objects, want.Unresolved)
		}
	}
	bad := write("libbad.so", "GROUP ( libnope.a )")
	if _, err := symcheck.CheckLinkInputs(context.Background(), []string{obj, bad}); err == nil || !strings.Contains(err.Error(), bad+": the ld script names libnope.a, which is not there") {
		t.Errorf("missing input: %v", err)
	}
	loop := write("libloop.so", "INPUT ( libloop.so )")
	if _, err := symcheck.CheckLinkInputs(context.Background(), []string{obj, loop}); err == nil || !strings.Contains(err.Error(), "nested more than 8 deep") {
		t.Errorf("a script naming itself: %v", err)
	}
	if _, err := symcheck.Symbols(context.Background(), []string{filepath.Join(dir, "libx.so")}, symcheck.SymbolsOptions{}); err == nil || !strings.Contains(err.Error(), "a GNU ld script standing for libgnu.a") {
		t.Errorf("a script alone: %v", err)
	}
	rep, err := symcheck.Symbols(context.Background(), []string{obj, filepath.Join(dir, "liby.so")}, symcheck.SymbolsOptions{})
	if err != nil || rep.Mode != "link-inputs" || len(rep.Findings) != 1 || rep.Findings[0].Symbol != "puts" {
		t.Errorf("symbols with a script: %v, %+v", err, rep)
	}
	// A script reached as <dir>/link/../x/liby.so, link -> sub/deeper:
	// its directory is where the link leads, <dir>/sub/x, not <dir>/x
	// (which does not exist), so -lgnu is found beside it there.
	os.MkdirAll(filepath.Join(dir, "sub", "deeper"), 0o755)
	os.MkdirAll(filepath.Join(dir, "sub", "x"), 0o755)
	os.Symlink("sub/deeper", filepath.Join(dir, "link"))
	b, _ := os.ReadFile(filepath.Join(dir, "libgnu.a"))
	os.WriteFile(filepath.Join(dir, "sub", "x", "libgnu.a"), b, 0o644)
	os.WriteFile(filepath.Join(dir, "sub", "x", "liby.so"), []byte("GROUP ( -lgnu )"), 0o644)
	through := filepath.Join(dir, "link") + "/../x/liby.so"
	if got, err := symcheck.CheckLinkInputs(context.Background(), []string{obj, through}); err != nil || got.Objects != want.Objects || len(got.Unresolved) != 1 || got.Unresolved["puts"] == nil {
		t.Errorf("a script through a link and '..': %v, %+v", err, got)
	}
}
