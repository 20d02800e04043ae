package inspect_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/clitest"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
	"github.com/rocmdoctor/rocmdoctor/internal/golden"
)

const td = clitest.Testdata

func TestInspectGolden(t *testing.T) {
	for _, tt := range []struct {
		name  string
		files []string
	}{
		{"shared", []string{"libfoo.so.1", "hello"}},
		{"archives", []string{"libgnu.a", "libthin.a", "libbsd.a"}},
		{"gpu", []string{"libgpu.so", "libraw.so", "k-gfx803.o", "k-gfx90a_xnackoff.co"}},
		{"odd", []string{"libbe.so", "i386.o", "libexecstack.so"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"inspect"}
			for _, f := range tt.files {
				args = append(args, td+f)
			}
			code, out, errOut := clitest.Run(args...)
			if code != cli.ExitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			golden.Assert(t, "inspect-"+tt.name+".txt", []byte(out))
			code, out, _ = clitest.Run(append([]string{"inspect", "--json"}, args[1:]...)...)
			if code != cli.ExitOK {
				t.Fatalf("--json exit %d", code)
			}
			golden.Assert(t, "inspect-"+tt.name+".json", []byte(out))
		})
	}
}

func TestInspectBadInputKeepsGoing(t *testing.T) {
	code, out, errOut := clitest.Run("inspect", td+"src/foo.c", td+"libfoo.so.1", td+"does-not-exist")
	if code != cli.ExitError {
		t.Errorf("exit = %d, want %d", code, cli.ExitError)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "foo.c: not an ELF file") || !strings.Contains(lines[1], "does-not-exist") {
		t.Errorf("stderr = %q, want one line per bad file", errOut)
	}
	if !strings.Contains(out, "soname: libfoo.so.1") {
		t.Errorf("the good file was not reported:\n%s", out)
	}
	code, out, _ = clitest.Run("inspect", "--json", td+"src/foo.c", td+"libfoo.so.1")
	var res struct {
		SchemaVersion int `json:"schema_version"`
		Files         []struct {
			Path, Kind, Error string
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if code != cli.ExitError || res.SchemaVersion != 1 || len(res.Files) != 2 || res.Files[0].Error == "" || res.Files[1].Error != "" {
		t.Errorf("exit %d, json %+v", code, res)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"inspect"}, {"inspect", "--bogus", "x"}, {"nosuchcommand"}, {"--color", "sometimes", "version"}} {
		code, _, errOut := clitest.Run(args...)
		if code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, cli.ExitUsage, errOut)
		}
	}
}

func TestTerminalTableAndColor(t *testing.T) {
	io, _, out, _ := cli.Test()
	io.SetTerminal(true)
	if code := root.Run(io, []string{"inspect", "--color", "always", td + "libexecstack.so"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	s := out.String()
	if !strings.Contains(s, "│") || !strings.Contains(s, "\x1b[31mRWX") {
		t.Errorf("terminal output lacks table borders or colour:\n%s", s)
	}
	io, _, out, _ = cli.Test()
	io.SetTerminal(true)
	root.Run(io, []string{"inspect", "--color", "never", td + "libexecstack.so"})
	if strings.Contains(out.String(), "\x1b[") {
		t.Errorf("--color never wrote escapes")
	}
}
