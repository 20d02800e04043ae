package root_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
)

// TestDocsCurrent regenerates the CLI reference and compares it with docs/.
// Regenerate with: go run ./cmd/rocmdoctor gen-docs docs
func TestDocsCurrent(t *testing.T) {
	tmp := t.TempDir()
	if err := root.GenerateDocs(tmp); err != nil {
		t.Fatal(err)
	}
	repoDocs := filepath.Join("..", "..", "..", "docs")
	for _, sub := range []string{"cli", "man"} {
		gen, _ := filepath.Glob(filepath.Join(tmp, sub, "*"))
		have, _ := filepath.Glob(filepath.Join(repoDocs, sub, "*"))
		if len(gen) == 0 {
			t.Fatalf("no %s docs generated", sub)
		}
		if len(gen) != len(have) {
			t.Errorf("docs/%s has %d files, generator writes %d: run go run ./cmd/rocmdoctor gen-docs docs", sub, len(have), len(gen))
		}
		for _, g := range gen {
			want, _ := os.ReadFile(g)
			got, err := os.ReadFile(filepath.Join(repoDocs, sub, filepath.Base(g)))
			if err != nil || string(got) != string(want) {
				t.Errorf("docs/%s/%s is stale or missing: run go run ./cmd/rocmdoctor gen-docs docs", sub, filepath.Base(g))
			}
		}
	}
}

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
