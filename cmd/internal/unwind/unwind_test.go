package unwind_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/clitest"
)

const td = clitest.Testdata

func hostLibunwindDir(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "lib")
	os.MkdirAll(dir, 0o755)
	b, _ := os.ReadFile(td + "libfoo.so.1")
	os.WriteFile(filepath.Join(dir, "libunwind.so"), b, 0o644)
	return dir
}

func TestUnwindLink(t *testing.T) {
	dir := hostLibunwindDir(t)
	code, out, _ := clitest.Run("unwind", "--link", "--", "clang++", "-x", "assembler", "-target", "amdgcn-amdhsa", "-mcpu=gfx803", "test.s", "-o", "test", "-L"+dir, "-lunwind")
	if code != cli.ExitFindings {
		t.Errorf("exit %d, want 3", code)
	}
	for _, want := range []string{"link for EM_AMDGPU gfx803 (from -target amdgcn-amdhsa)", "INCOMPATIBLE",
		"`-lunwind` resolves to " + dir + "/libunwind.so (ELF64 EM_X86_64)", "remove -lunwind or the -L" + dir + " injected by the wrapper"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Each input's row says what is wrong with it: test.s (not built
	// here) is missing, not incompatible.
	for _, row := range []string{"test.s\tmissing\ttest.s\t\tMISSING\n", "-lunwind\tshared\t" + dir + "/libunwind.so\tELF64 EM_X86_64\tINCOMPATIBLE\n"} {
		if !strings.Contains(out, row) {
			t.Errorf("output lacks the row %q:\n%s", row, out)
		}
	}
	code, out, _ = clitest.Run("unwind", "--json", "--link", "--", td+"k-gfx803.o", "-L"+dir, "-lunwind")
	var res struct {
		SchemaVersion int `json:"schema_version"`
		Mode          string
		Findings      []struct{ Rule string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if code != cli.ExitFindings || res.Mode != "link" || len(res.Findings) != 1 || res.Findings[0].Rule != "incompatible-link-input" {
		t.Errorf("json: exit %d %+v", code, res)
	}
}

func TestUnwindUsage(t *testing.T) {
	if code, _, _ := clitest.Run("unwind"); code != cli.ExitUsage {
		t.Errorf("no args: exit %d", code)
	}
	if code, _, _ := clitest.Run("unwind", "--link", "--", "-L"); code != cli.ExitUsage {
		t.Errorf("bad link line: exit %d", code)
	}
	if code, _, _ := clitest.Run("unwind", "--link-transcript", "t.txt", "--link", "--", "k.o"); code != cli.ExitUsage {
		t.Errorf("--link-transcript with --link: exit %d", code)
	}
}

// TestUnwindTranscript: --link-transcript reads the linker job of a
// `clang -###` transcript; a file it cannot read is an error naming it.
func TestUnwindTranscript(t *testing.T) {
	dir := t.TempDir()
	obj, _ := filepath.Abs(td + "k-gfx803.o")
	tr := filepath.Join(dir, "t.txt")
	os.WriteFile(tr, []byte("clang version 15.0.6\nTarget: amdgcn-amd-amdhsa\n \"/usr/lib/llvm-15/bin/clang\" \"-cc1\" \"-triple\" \"amdgcn-amd-amdhsa\"\n"+
		" \"/usr/lib/llvm-15/bin/ld.lld\" \""+obj+"\" \"-lunwind\" \"-shared\" \"-o\" \"a.out\"\n"), 0o644)
	code, out, _ := clitest.Run("unwind", "--link-transcript", tr)
	if code != cli.ExitFindings || !strings.Contains(out, "linker arguments: the arguments of the /usr/lib/llvm-15/bin/ld.lld job in "+tr) ||
		!strings.Contains(out, `-lunwind: no libunwind.so or libunwind.a in the search path, which is empty (ld.lld: "unable to find library -lunwind"`) {
		t.Errorf("exit %d\n%s", code, out)
	}
	code, _, errOut := clitest.Run("unwind", "--link-transcript", filepath.Join(dir, "gone.txt"))
	if code != cli.ExitError || !strings.Contains(errOut, filepath.Join(dir, "gone.txt")) {
		t.Errorf("missing transcript: exit %d %s", code, errOut)
	}
}

// With --root, an absolute FILE is the file inside the sysroot.
func TestUnwindFileInRoot(t *testing.T) {
	root, inside := clitest.InSysroot(t, "libfoo.so.1", "usr/lib/libfoo.so.1")
	code, out, errOut := clitest.Run("unwind", "--root", root, "--fail-on", "never", "--json", "/usr/lib/libfoo.so.1")
	if code != 0 || !strings.Contains(out, inside) {
		t.Errorf("exit %d, stderr %q; want a report on %s:\n%s", code, errOut, inside, out)
	}
}

// TestUnwindBadFileAmongGood: a file that cannot be checked gets one line
// on stderr (and its error in JSON) and exit status 1, and the other files
// are still reported (unwind printed nothing but the error).
func TestUnwindBadFileAmongGood(t *testing.T) {
	dir := t.TempDir()
	missing, empty := filepath.Join(dir, "nowhere.so"), filepath.Join(dir, "empty.so")
	os.WriteFile(empty, nil, 0o644)
	code, out, errOut := clitest.Run("unwind", td+"libfoo.so.1", missing, empty)
	if code != cli.ExitError || !strings.HasPrefix(out, td+"libfoo.so.1\n") || strings.Contains(out, "nowhere") || strings.Contains(out, "empty.so") {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	if errOut != "rocmdoctor: "+missing+": no such file or directory\nrocmdoctor: "+empty+": not an ELF file\n" {
		t.Errorf("stderr %q", errOut)
	}
	code, out, _ = clitest.Run("unwind", "--json", missing, td+"libfoo.so.1")
	var res struct {
		Files []struct{ File, Error string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if code != cli.ExitError || len(res.Files) != 2 || res.Files[0].Error != missing+": no such file or directory" || res.Files[1].Error != "" {
		t.Errorf("json: exit %d %+v", code, res)
	}
}
