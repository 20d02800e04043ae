package wheelcmd_test

import (
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
)

func TestWheelRelinkUsage(t *testing.T) {
	io, _, _, errOut := cli.Test()
	if code := root.Run(io, []string{"wheel", "relink", "--rocm", "/x", "a.whl"}); code != cli.ExitUsage || !strings.Contains(errOut.String(), "-o DIR") {
		t.Errorf("no output choice: exit %d %q", code, errOut)
	}
	io, _, _, errOut = cli.Test()
	if code := root.Run(io, []string{"wheel", "relink", "--dry-run", "../../../testdata/libfoo.so.1"}); code != cli.ExitError || !strings.Contains(errOut.String(), "target") {
		t.Errorf("no target: exit %d %q", code, errOut)
	}
	io, _, _, errOut = cli.Test()
	if code := root.Run(io, []string{"wheel", "relink", "--dry-run", "--lib-dir", "../../../testdata", "../../../testdata/libfoo.so.1"}); code != cli.ExitError || !strings.Contains(errOut.String(), "not a .whl") {
		t.Errorf("bad input: exit %d %q", code, errOut)
	}
}
