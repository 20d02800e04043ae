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
	os.MkdirAll(filepath.Join(dir, "x"), 0o755)
	io, _, out, _ = cli.Test()
	if code := root.Run(io, []string{"prefix", dir}); code != 0 || !strings.Contains(out.String(), "no findings") {
		t.Errorf("empty prefix: exit %d\n%s", code, out)
	}
	io, _, _, errOut := cli.Test()
	if code := root.Run(io, []string{"prefix", filepath.Join(dir, "nope")}); code != cli.ExitError || !strings.Contains(errOut.String(), "not a directory") {
		t.Errorf("missing prefix: exit %d %q", code, errOut)
	}
}

// With --root, PREFIX and the $ROCM_PATH default are inside the sysroot.
func TestPrefixInRoot(t *testing.T) {
	sys := t.TempDir()
	os.MkdirAll(filepath.Join(sys, "opt", "rocm-x", "x"), 0o755)
	for _, args := range [][]string{{"/opt/rocm-x"}, {}} {
		t.Setenv("ROCM_PATH", "/opt/rocm-x")
		io, _, out, errOut := cli.Test()
		if code := root.Run(io, append([]string{"prefix", "--root", sys}, args...)); code != 0 || !strings.Contains(out.String(), "no findings") {
			t.Errorf("%v: exit %d %q\n%s", args, code, errOut, out)
		}
	}
}
