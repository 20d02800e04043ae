package root_test

import (
	"os"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
)

func TestVersionAndCompletion(t *testing.T) {
	io, _, out, _ := cli.Test()
	if code := root.Run(io, []string{"version"}); code != 0 || !strings.HasPrefix(out.String(), "rocmdoctor ") {
		t.Errorf("version: exit %d, %q", code, out)
	}
	io, _, out, _ = cli.Test()
	if code := root.Run(io, []string{"completion", "bash"}); code != 0 || !strings.Contains(out.String(), "bash completion") {
		t.Errorf("completion bash: exit %d", code)
	}
}

func TestExitCodes(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{&cli.UsageError{Err: os.ErrInvalid}, 2},
		{&cli.FindingsError{Count: 2}, 3},
		{cli.SilentError, 1},
		{os.ErrNotExist, 1},
	} {
		if got := cli.ExitCode(tt.err); got != tt.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}
