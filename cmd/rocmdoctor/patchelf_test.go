package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// Invoked through a link named patchelf, the binary is patchelf: the same
// options at the top level, help on standard error, exit status 1 for
// every error (argument errors too) and patchelf's words; the OS ABI names
// patchelf prints; a separate debug file's print options print nothing.
func TestInvokedAsPatchelf(t *testing.T) {
	dir := t.TempDir()
	pe := filepath.Join(dir, "patchelf")
	if err := os.Symlink(os.Args[0], pe); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, "libfoo.so.1")
	b, _ := os.ReadFile(testenv.Testdata("libfoo.so.1"))
	os.WriteFile(lib, b, 0o755)
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(pe, args...)
		cmd.Env = append(os.Environ(), asMain+"=1", "ROCMDOCTOR_TEST_ARGS=")
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), code
	}
	cases := []struct {
		args              []string
		out, errOut       string
		code              int
		exactOut, noError bool
	}{
		{[]string{"--print-soname", lib}, "libfoo.so.1\n", "", 0, true, true},
		{nil, "", "syntax: patchelf", 1, true, false},
		{[]string{"--help"}, "", "syntax: patchelf", 0, true, false},
		{[]string{"--version"}, "patchelf 0.19.0", "", 0, false, true},
		{[]string{"--set-rpath"}, "", "patchelf: missing argument\n", 1, true, false},
		{[]string{"--print-soname"}, "", "patchelf: missing filename\n", 1, true, false},
		{[]string{"--print-soname", filepath.Join(dir, "nothing")}, "", "patchelf: getting info about '" + filepath.Join(dir, "nothing") + "': No such file or directory\n", 1, true, false},
		{[]string{"--set-rpath", "@" + filepath.Join(dir, "nothing"), lib}, "", "patchelf: getting info about '" + filepath.Join(dir, "nothing") + "': No such file or directory\n", 1, true, false},
		{[]string{"--set-os-abi", " gnu hurd ", lib}, "", "", 0, true, true},
		{[]string{"--print-os-abi", lib}, "GNU Hurd\n", "", 0, true, true},
		{[]string{"--set-os-abi", "64", lib}, "", "", 0, true, true},
		{[]string{"--print-os-abi", lib}, "0x40\n", "", 0, true, true},
		// patchelf's resolution cache: a warning when there is nothing to
		// resolve (no run path left), refused with --force-rpath.
		{[]string{"--remove-rpath", lib}, "", "", 0, true, true},
		{[]string{"--build-resolution-cache", lib}, "", "warning: --build-resolution-cache: no DT_NEEDED entries or run path to resolve; no cache written\n", 0, true, false},
		{[]string{"--force-rpath", "--build-resolution-cache", lib}, "", "patchelf: --build-resolution-cache cannot be combined with --force-rpath\n", 1, true, false},
	}
	for _, c := range cases {
		out, errOut, code := run(c.args...)
		okOut := out == c.out || !c.exactOut && strings.HasPrefix(out, c.out)
		okErr := c.noError && errOut == "" || !c.noError && strings.HasPrefix(errOut, c.errOut)
		if code != c.code || !okOut || !okErr {
			t.Errorf("patchelf %q: exit %d, out %q, err %q; want %d, %q, %q", c.args, code, out, errOut, c.code, c.out, c.errOut)
		}
	}
	// strip --only-keep-debug keeps a NOBITS .dynamic: nothing to print.
	objcopy := testenv.Tool(t, "objcopy", "binutils")
	dbg := filepath.Join(dir, "libfoo.debug")
	if out, err := exec.Command(objcopy, "--only-keep-debug", lib, dbg).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v %s", err, out)
	}
	for _, opt := range []string{"--print-rpath", "--print-needed", "--print-soname"} {
		if out, errOut, code := run(opt, dbg); code != 0 || out != "" || errOut != "" {
			t.Errorf("%s on a debug file: exit %d, %q, %q; want 0 and nothing", opt, code, out, errOut)
		}
	}
}

// A file whose first print option works and whose second fails prints
// nothing of it (patchelf printed the interpreter, then failed).
func TestPatchelfNoPartialOutput(t *testing.T) {
	b, err := os.ReadFile(testenv.Testdata("hello"))
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	ds := ef.Section(".dynamic")
	for off := ds.Offset; off+16 <= ds.Offset+ds.Size; off += 16 {
		if elf.DynTag(binary.LittleEndian.Uint64(b[off:])) == elf.DT_NEEDED {
			binary.LittleEndian.PutUint64(b[off+8:], 1<<40) // a name far past .dynstr
		}
	}
	p := filepath.Join(t.TempDir(), "hello")
	os.WriteFile(p, b, 0o755)
	cmd := rocmdoctorCmd([]string{"patchelf", "--print-interpreter", "--print-needed", p})
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if err == nil || out.Len() != 0 || errOut.Len() == 0 {
		t.Errorf("exit %v, stdout %q, stderr %q: want an error and nothing printed", err, out.String(), errOut.String())
	}
}
