package inspect_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/clitest"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
	"github.com/rocmdoctor/rocmdoctor/internal/golden"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
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
		{"dlopen", []string{"checktree/lib/libdlopener.so", "checktree/lib/libdlbadnote.so"}},
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

// TestInspectPartlyReadable: a library whose device code is damaged and an
// archive with a damaged member are shown with what could be read, the
// error where the rest would be; each problem is a line on stderr naming
// the file (and member), and the exit status is 1. Before, the library
// was refused whole and the member's error was in the table only (exit 0).
func TestInspectPartlyReadable(t *testing.T) {
	dir := t.TempDir()
	lib, s := testenv.DamagedFatbin(t)
	gpu := filepath.Join(dir, "libgpu.so")
	if err := os.WriteFile(gpu, lib, 0o644); err != nil {
		t.Fatal(err)
	}
	ar, err := os.ReadFile(td + "libgnu.a")
	if err != nil {
		t.Fatal(err)
	}
	// The first ELF member's section header table is sent past its end.
	member := ""
	for off := 8; off+60 <= len(ar); {
		size, err := strconv.Atoi(strings.TrimSpace(string(ar[off+48 : off+58])))
		if err != nil {
			t.Fatalf("libgnu.a: member header at %d: %v", off, err)
		}
		data := ar[off+60 : off+60+size]
		if bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
			member = strings.TrimSuffix(strings.TrimSpace(string(ar[off:off+16])), "/")
			binary.LittleEndian.PutUint64(data[0x28:], 1<<40) // e_shoff
			break
		}
		off += 60 + size + size%2
	}
	if member == "" {
		t.Fatal("libgnu.a has no ELF member")
	}
	arch := filepath.Join(dir, "libgnu.a")
	if err := os.WriteFile(arch, ar, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := clitest.Run("inspect", gpu, arch)
	if code != cli.ExitError {
		t.Errorf("exit = %d, want %d", code, cli.ExitError)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	wantBundle := fmt.Sprintf("rocmdoctor: %s: malformed file at offset 0x%x: .hip_fatbin: %d bytes without an offload bundle in them", gpu, s.Offset, s.Size)
	if len(lines) != 2 || lines[0] != wantBundle || !strings.HasPrefix(lines[1], "rocmdoctor: "+arch+"("+member+"): ") {
		t.Errorf("stderr = %q, want\n%s\nand a line naming %s(%s)", errOut, wantBundle, arch, member)
	}
	for _, want := range []string{"soname: libgpu.so", "dynamic symbols: 2 defined", "gpu targets: error: " + gpu + ": malformed file", "members: ", member} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = clitest.Run("inspect", "--json", gpu)
	var res struct {
		Files []struct {
			Error string
			ELF   *struct {
				Soname          string `json:"soname"`
				DeviceCodeError string `json:"device_code_error"`
			} `json:"elf"`
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if code != cli.ExitError || len(res.Files) != 1 || res.Files[0].Error != "" || res.Files[0].ELF == nil ||
		res.Files[0].ELF.Soname != "libgpu.so" || "rocmdoctor: "+res.Files[0].ELF.DeviceCodeError != wantBundle {
		t.Errorf("--json: exit %d, %s", code, out)
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
