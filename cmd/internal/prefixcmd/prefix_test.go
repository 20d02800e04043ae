package prefixcmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
)

func TestPrefixCommand(t *testing.T) {
	dir := t.TempDir()
	io, _, out, _ := cli.Test()
	code := root.Run(io, []string{"prefix", "--json", "--for", "migraphx", dir})
	var rep struct {
		SchemaVersion int `json:"schema_version"`
		Findings      []struct{ Rule string }
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if code != cli.ExitFindings || len(rep.Findings) != 1 || rep.Findings[0].Rule != "headers-missing" {
		t.Errorf("exit %d, %+v", code, rep)
	}
	// A directory with nothing of ROCm in it is a wrong path: an error,
	// not "no findings" (which passed a typo).
	os.MkdirAll(filepath.Join(dir, "x"), 0o755)
	io, _, out, errOut := cli.Test()
	if code := root.Run(io, []string{"prefix", dir}); code != cli.ExitError || out.Len() != 0 || !strings.Contains(errOut.String(), dir+": no ROCm install here: ") {
		t.Errorf("empty prefix: exit %d %q\n%s", code, errOut, out)
	}
	os.MkdirAll(filepath.Join(dir, "lib"), 0o755)
	io, _, out, _ = cli.Test()
	if code := root.Run(io, []string{"prefix", dir}); code != 0 || !strings.Contains(out.String(), "no findings") {
		t.Errorf("prefix with an empty lib: exit %d\n%s", code, out)
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "nope"): filepath.Join(dir, "nope") + ": no such file or directory\n",
		filepath.Join(dir, "f"):    filepath.Join(dir, "f") + ": not a directory\n",
	} {
		os.WriteFile(filepath.Join(dir, "f"), nil, 0o644)
		io, _, _, errOut = cli.Test()
		if code := root.Run(io, []string{"prefix", path}); code != cli.ExitError || errOut.String() != "rocmdoctor: "+want {
			t.Errorf("%s: exit %d %q", path, code, errOut)
		}
	}
}

// With --root, PREFIX and the $ROCM_PATH default are inside the sysroot.
func TestPrefixInRoot(t *testing.T) {
	sys := t.TempDir()
	os.MkdirAll(filepath.Join(sys, "opt", "rocm-x", "lib"), 0o755)
	for _, args := range [][]string{{"/opt/rocm-x"}, {}} {
		t.Setenv("ROCM_PATH", "/opt/rocm-x")
		io, _, out, errOut := cli.Test()
		if code := root.Run(io, append([]string{"prefix", "--root", sys}, args...)); code != 0 || !strings.Contains(out.String(), "no findings") {
			t.Errorf("%v: exit %d %q\n%s", args, code, errOut, out)
		}
	}
}
