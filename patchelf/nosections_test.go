package patchelf

import (
	"debug/elf"
	"encoding/binary"
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
	testenv.StripSectionHeaders(b)
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

// TestGrowingWithoutSectionHeaders: in a file without section headers, a
// growing edit moves what follows the program header table (here the
// build-id note and .gnu.hash) as it moves sections, from what the loader
// can see; the loader then runs hello against the library (writing the
// new header over them left one that crashed it). Where something it
// cannot account for follows the table, the edit is refused.
func TestGrowingWithoutSectionHeaders(t *testing.T) {
	dir := t.TempDir()
	lib := strippedCopy(t, dir, "libfoo.so.1")
	b, err := os.ReadFile(testenv.Testdata("hello"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "hello"), b, 0o755)
	orig, _ := os.ReadFile(lib)
	rpath := "/opt/rocm-9.9.9/lib/" + strings.Repeat("x", 300)
	p, err := EditFile(lib, []Edit{{Kind: KindSetRPath, Arg: rpath}, {Kind: KindAddNeeded, Arg: "libm.so.6"}}, Options{}, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Moved, " "); !strings.Contains(got, ".gnu.hash") || !strings.Contains(got, ".note@0x200") {
		t.Errorf("moved %q, want the note and .gnu.hash", got)
	}
	f, err := elfx.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.Dynamic()
	if err != nil || d.RunPath != rpath {
		t.Errorf("RUNPATH %q, %v", d.RunPath, err)
	}
	// The build-id note moved whole, and PT_NOTE with it.
	for _, ph := range f.ELF().Progs {
		if ph.Type == elf.PT_NOTE {
			note := make([]byte, ph.Filesz)
			ph.ReadAt(note, 0)
			if want := orig[0x200:0x224]; string(note) != string(want) {
				t.Errorf("PT_NOTE at 0x%x holds %x, want %x", ph.Off, note, want)
			}
		}
	}
	if _, err := f.DynamicSymbolTable(); err != nil {
		t.Error(err)
	}
	f.Close()
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		if out, err := exec.Command(filepath.Join(dir, "hello")).CombinedOutput(); err != nil || string(out) != "2 2.0\n" {
			t.Errorf("hello: %v: %q", err, out)
		}
	}

	// Bytes nothing accounts for between the note and .gnu.hash.
	lib2 := strippedCopy(t, t.TempDir(), "libfoo.so.1")
	b2, _ := os.ReadFile(lib2)
	b2[0x225] = 0x5a
	os.WriteFile(lib2, b2, 0o755)
	_, err = EditFile(lib2, []Edit{{Kind: KindSetRPath, Arg: rpath}}, Options{}, WriteOptions{})
	if err == nil || !strings.Contains(err.Error(), "no section headers, and data at 0x225") {
		t.Errorf("unaccounted bytes: %v", err)
	}
	if after, _ := os.ReadFile(lib2); string(after) != string(b2) {
		t.Error("the refused edit changed the file")
	}
	// An edit that fits in place is made as before.
	if _, err := EditFile(lib2, []Edit{{Kind: KindSetRPath, Arg: "/opt/r"}}, Options{}, WriteOptions{}); err != nil {
		t.Errorf("edit in place: %v", err)
	}
}

// TestVersionEditsWithoutSectionHeaders: --replace-needed renames the
// .gnu.version_r file and --clear-symbol-version clears a symbol's
// .gnu.version entry in a file without section headers too (both did
// nothing there, and said nothing).
func TestVersionEditsWithoutSectionHeaders(t *testing.T) {
	lib := strippedCopy(t, t.TempDir(), "libfoo.so.1")
	if _, err := EditFile(lib, []Edit{{Kind: KindReplaceNeeded, Arg: "libm.so.6", Arg2: "libmvec.so.1"}, {Kind: KindClearSymbolVersion, Arg: "foo_sqrt"}}, Options{}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := elfx.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	needs, err := f.VersionNeeds()
	if err != nil || len(needs) != 1 || needs[0].File != "libmvec.so.1" {
		t.Errorf(".gnu.version_r = %+v, %v", needs, err)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range syms {
		if s.Name == "foo_sqrt" {
			found = true
			if s.VersionIndex != 1 || s.Version != "" {
				t.Errorf("foo_sqrt keeps version %q (index %d)", s.Version, s.VersionIndex)
			}
		}
	}
	if !found {
		t.Error("no foo_sqrt")
	}
}

// TestGrowingWithoutSectionHeadersOrDynamic: a file with neither section
// headers nor a dynamic section (here hello with its PT_DYNAMIC and
// PT_GNU_STACK entries blanked) gets a new PT_GNU_STACK from a stack edit;
// the interpreter path and the notes that follow the program headers move
// out of the grown table's way instead of being overwritten.
func TestGrowingWithoutSectionHeadersOrDynamic(t *testing.T) {
	p := strippedCopy(t, t.TempDir(), "hello")
	b, _ := os.ReadFile(p)
	f0, err := elfx.Open(testenv.Testdata("hello"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[elf.ProgType][]byte{}
	for i, ph := range f0.ELF().Progs {
		switch ph.Type {
		case elf.PT_DYNAMIC, elf.PT_GNU_STACK:
			binary.LittleEndian.PutUint32(b[0x40+56*i:], uint32(elf.PT_NULL))
		case elf.PT_INTERP, elf.PT_GNU_PROPERTY:
			want[ph.Type] = append([]byte(nil), b[ph.Off:ph.Off+ph.Filesz]...)
		}
	}
	f0.Close()
	os.WriteFile(p, b, 0o755)
	if _, err := EditFile(p, []Edit{{Kind: KindClearExecStack}}, Options{}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := elfx.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	after, _ := os.ReadFile(p)
	stack := false
	for _, ph := range f.ELF().Progs {
		stack = stack || ph.Type == elf.PT_GNU_STACK
		if w, ok := want[ph.Type]; ok {
			if got := after[ph.Off : ph.Off+ph.Filesz]; string(got) != string(w) {
				t.Errorf("%v at 0x%x holds %q, want %q", ph.Type, ph.Off, got, w)
			}
		}
	}
	if !stack {
		t.Error("no PT_GNU_STACK added")
	}
}
