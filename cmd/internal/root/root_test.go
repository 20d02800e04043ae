package root_test

import (
	"errors"
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
		{cli.ErrSilent, 1},
		{os.ErrNotExist, 1},
	} {
		if got := cli.ExitCode(tt.err); got != tt.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// TestUnknownSubcommandRefused: a command that only groups others refuses
// an argument naming none of them with a usage error (cobra printed the
// help and exited 0, so a typo in a CI script passed); alone it prints
// its help.
func TestUnknownSubcommandRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"wheel", "relnk", "x.whl"}, 2, `unknown command "relnk" for "rocmdoctor wheel"; did you mean relink?`},
		{[]string{"completion", "bassh"}, 2, `unknown command "bassh" for "rocmdoctor completion"; did you mean bash?`},
		{[]string{"chek", "/opt/rocm"}, 2, `unknown command "chek" for "rocmdoctor"`},
		// The help pointed to is the command's own.
		{[]string{"wheel", "relnk", "x.whl"}, 2, "Run 'rocmdoctor wheel --help' for usage."},
		{[]string{"check", "--bogus"}, 2, "unknown flag: --bogus\nRun 'rocmdoctor check --help' for usage."},
		{[]string{"chek"}, 2, "Run 'rocmdoctor --help' for usage."},
	} {
		io, _, out, errOut := cli.Test()
		if code := root.Run(io, c.args); code != c.code || !strings.Contains(errOut.String(), c.want) || out.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d and %q", c.args, code, out, errOut, c.code, c.want)
		}
	}
	io, _, out, _ := cli.Test()
	if code := root.Run(io, []string{"wheel"}); code != 0 || !strings.Contains(out.String(), "relink") {
		t.Errorf("wheel alone: exit %d, %q", code, out)
	}
}

// failingWriter refuses every write, like a full disk.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// Output that could not be written fails the command (exit 1, a message),
// even when the command itself succeeded.
func TestUnwritableOutputFails(t *testing.T) {
	var errOut strings.Builder
	io := cli.NewStreams(nil, failingWriter{}, &errOut, false, false)
	if code := root.Run(io, []string{"version"}); code != cli.ExitError {
		t.Errorf("exit %d, want %d", code, cli.ExitError)
	}
	if !strings.Contains(errOut.String(), "rocmdoctor: writing the output: no space left on device") {
		t.Errorf("stderr: %q", errOut.String())
	}
}

// Flags that take one of a fixed set complete to it (cobra's __complete,
// what the generated completion scripts call).
func TestEnumCompletion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--format", ""}, "table plain json sarif junit"},
		{[]string{"gpus", "--format", ""}, "table markdown"},
		{[]string{"ck", "--for", ""}, "miopen-6.0 miopen-6.1 miopen-6.2 miopen-6.3 miopen-6.4"},
		{[]string{"deps", "--hwcaps", ""}, "auto none x86-64-v2 x86-64-v3 x86-64-v4"},
		{[]string{"check", "--fail-on", ""}, "error warning note never"},
		{[]string{"symbols", "--color", ""}, "auto always never"},
	} {
		io, _, out, _ := cli.Test()
		root.Run(io, append([]string{"__complete"}, c.args...))
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if got := strings.Join(lines[:len(lines)-1], " "); got != c.want || lines[len(lines)-1] != ":4" {
			t.Errorf("%v: %q (directive %s), want %q with no file completion", c.args, got, lines[len(lines)-1], c.want)
		}
	}
}
