package patchelf

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// strippedCopy copies testdata name into dir with its section headers
// stripped (e_shoff, e_shnum and e_shstrndx zero, as sstrip leaves it).
func strippedCopy(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(testenv.Testdata(name))
	if err != nil {
		t.Fatal(err)
	}
	if b[elf.EI_CLASS] != byte(elf.ELFCLASS64) || b[elf.EI_DATA] != byte(elf.ELFDATA2LSB) {
		t.Fatalf("%s: not ELF64 LSB", name)
	}
	clear(b[0x28:0x30])
	clear(b[0x3c:0x40])
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func modelOf(t *testing.T, path string) *model {
	t.Helper()
	f, err := elfx.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m := &model{f: f, path: f.Path, bo: f.ByteOrder(), is64: f.Class == elf.ELFCLASS64, output: map[string]string{},
		verneedFile: map[int64]string{}, versym: map[int64]uint16{}}
	if err := m.load(); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestReferencesWithoutSectionHeaders: the strings .dynsym and the version
// tables name are counted as used when they are found through the dynamic
// segment, as they are with section headers; otherwise an edit could take
// a symbol's name for free space.
func TestReferencesWithoutSectionHeaders(t *testing.T) {
	orig := modelOf(t, testenv.Testdata("libfoo.so.1"))
	stripped := modelOf(t, strippedCopy(t, t.TempDir(), "libfoo.so.1"))
	strs := 0
	for _, e := range orig.ents {
		if e.ok {
			strs++
		}
	}
	if len(stripped.refOff) != len(orig.refOff) || len(orig.refOff) <= strs {
		t.Errorf("%d references without section headers, %d with (%d from the dynamic section)", len(stripped.refOff), len(orig.refOff), strs)
	}
	for i := range min(len(orig.refOff), len(stripped.refOff)) {
		if orig.refOff[i] != stripped.refOff[i] {
			t.Fatalf("reference %d: 0x%x, want 0x%x", i, stripped.refOff[i], orig.refOff[i])
		}
	}
}

// TestGrowingWithoutSectionHeaders: a file without section headers whose
// program header table is followed by a note is not grown over it (the
// result crashed the process that loaded it); an edit that fits in place
// is made, and the loader still runs hello against the library.
func TestGrowingWithoutSectionHeaders(t *testing.T) {
	dir := t.TempDir()
	lib := strippedCopy(t, dir, "libfoo.so.1")
	b, err := os.ReadFile(testenv.Testdata("hello"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "hello"), b, 0o755)
	before, _ := os.ReadFile(lib)
	_, err = EditFile(lib, []Edit{{Kind: SetRPath, Arg: "/opt/rocm-9.9.9/lib/" + strings.Repeat("x", 300)}}, Options{}, WriteOptions{})
	if err == nil || !strings.Contains(err.Error(), "no section headers") || !strings.Contains(err.Error(), "NOTE segment at 0x200") {
		t.Errorf("growing edit: %v", err)
	}
	if after, _ := os.ReadFile(lib); string(after) != string(before) {
		t.Error("the refused edit changed the file")
	}
	if _, err := EditFile(lib, []Edit{{Kind: SetRPath, Arg: "/opt/r"}}, Options{}, WriteOptions{}); err != nil {
		t.Fatalf("edit in place: %v", err)
	}
	f, err := elfx.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.Dynamic()
	if err != nil || d.RunPath != "/opt/r" {
		t.Errorf("RUNPATH %q, %v", d.RunPath, err)
	}
	f.Close()
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		if out, err := exec.Command(filepath.Join(dir, "hello")).CombinedOutput(); err != nil || string(out) != "2 2.0\n" {
			t.Errorf("hello: %v: %q", err, out)
		}
	}
}
