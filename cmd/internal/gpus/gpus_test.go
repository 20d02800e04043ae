package gpus_test

import (
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
	"github.com/rocmdoctor/rocmdoctor/internal/golden"
)

const td = "../../../testdata/"

func run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	io, _, out, _ := cli.Test()
	code := root.Run(io, args)
	return code, out.String()
}

func TestGPUsGolden(t *testing.T) {
	code, out := run(t, "gpus", "--format", "markdown", td+"libgpu.so", td+"libraw.so", td+"k-gfx803.o", td+"libfoo.so.1")
	if code != 0 {
		t.Errorf("exit %d", code)
	}
	golden.Assert(t, "gpus-markdown.txt", []byte(out))
	code, out = run(t, "gpus", "--json", "--require", "gfx1030,gfx90a:xnack+", td+"libgpu.so", td+"libraw.so")
	if code != cli.ExitFindings {
		t.Errorf("--require: exit %d, want 3", code)
	}
	golden.Assert(t, "gpus-require.json", []byte(out))
}

func TestGPUsEnvAndUsage(t *testing.T) {
	t.Setenv("ROCMDOCTOR_GPU_TARGETS", "gfx1100")
	code, out := run(t, "gpus", td+"libgpu.so")
	if code != cli.ExitFindings || !strings.Contains(out, "none usable on gfx1100") {
		t.Errorf("ROCMDOCTOR_GPU_TARGETS ignored: exit %d\n%s", code, out)
	}
	if code, _ := run(t, "gpus", "--require", "gfx90a:foo+", td+"libgpu.so"); code != cli.ExitUsage {
		t.Errorf("bad target ID: exit %d", code)
	}
	if code, _ := run(t, "gpus", "--format", "yaml", td+"libgpu.so"); code != cli.ExitUsage {
		t.Errorf("bad format: exit %d", code)
	}
}
