package elfx_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// objSym is a symbol as both readers give it.
type objSym struct {
	Name    string
	Bind    elf.SymBind
	Type    elf.SymType
	Section elf.SectionIndex
}

func scanObject(r io.ReaderAt, size int64, prefix string) ([]objSym, bool) {
	var out []objSym
	plain := elfx.EachObjectSymbol(r, size, prefix, func(s elfx.ObjectSymbol) {
		out = append(out, objSym{string(s.Name), s.Bind, s.Type, s.Section})
	})
	return out, plain
}

// openObject reads the object's .symtab as Open and Symbols do, keeping
// the names that start with prefix.
func openObject(r io.ReaderAt, size int64, prefix string) ([]objSym, error) {
	f, err := elfx.NewFileSize(r, size, "object")
	if err != nil {
		return nil, err
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	var out []objSym
	for _, s := range syms {
		if strings.HasPrefix(s.Name, prefix) {
			out = append(out, objSym{s.Name, s.Bind, s.Type, s.Section})
		}
	}
	return out, nil
}

// compareObject checks that EachObjectSymbol reads r as Open and Symbols
// do, for every name and for prefix; want says it must be plain.
func compareObject(r io.ReaderAt, size int64, prefix string) (plain bool, err error) {
	for _, p := range []string{"", prefix} {
		got, plain := scanObject(r, size, p)
		if !plain {
			if got != nil {
				return false, fmt.Errorf("not plain, but fn was called %d times", len(got))
			}
			return false, nil
		}
		want, err := openObject(r, size, p)
		if err != nil {
			return true, fmt.Errorf("plain, but Open/Symbols say: %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			return true, fmt.Errorf("prefix %q: %d symbols, Open/Symbols %d (first difference at %d)", p, len(got), len(want), firstDiff(got, want))
		}
	}
	return true, nil
}

// deviceCodeFree checks ObjectWithoutDeviceCode against Open and
// GPUCodeObjects: where it says the object holds no device code, Open
// reads the object and GPUCodeObjects finds none and no error.
func deviceCodeFree(r io.ReaderAt, size int64) (free bool, err error) {
	if !elfx.ObjectWithoutDeviceCode(r, size) {
		return false, nil
	}
	f, err := elfx.NewFileSize(r, size, "object")
	if err != nil {
		return true, fmt.Errorf("without device code, but Open says: %v", err)
	}
	if cos, err := f.GPUCodeObjects(); len(cos) > 0 || err != nil {
		return true, fmt.Errorf("without device code, but GPUCodeObjects finds %d (%v)", len(cos), err)
	}
	return true, nil
}

func firstDiff(a, b []objSym) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// compareArchiveObjects runs compareObject and deviceCodeFree on every ELF
// member of the archive at path and requires each to be plain (ordinary
// compiler output); free counts the members found without device code.
func compareArchiveObjects(path, prefix string) (members, free int, err error) {
	a, err := elfx.OpenArchive(path)
	if err != nil {
		return 0, 0, err
	}
	defer a.Close()
	for i := range a.Members {
		sr, err := a.Open(i)
		if err != nil {
			return members, free, err
		}
		if elfx.Sniff(sr) != elfx.KindELF {
			continue
		}
		members++
		plain, err := compareObject(sr, sr.Size(), prefix)
		if err != nil {
			return members, free, fmt.Errorf("%s: %v", a.MemberPath(i), err)
		}
		if !plain {
			return members, free, fmt.Errorf("%s: not plain", a.MemberPath(i))
		}
		none, err := deviceCodeFree(sr, sr.Size())
		if err != nil {
			return members, free, fmt.Errorf("%s: %v", a.MemberPath(i), err)
		}
		if none {
			free++
		}
	}
	return members, free, nil
}

func TestEachObjectSymbolMatchesOpen(t *testing.T) {
	// 64-bit little-endian, 32-bit, big-endian and an AMDGPU code object
	// (ET_REL); each must be read, and read as Open reads it.
	for _, n := range []string{"archive_a.o", "i386.o", "be.o", "k-gfx803.o", "ck/consumer.o"} {
		b := readFixture(t, n)
		plain, err := compareObject(bytes.NewReader(b), int64(len(b)), "foo")
		if err != nil || !plain {
			t.Errorf("%s: plain=%v, %v", n, plain, err)
		}
	}
	for _, n := range []string{"libgnu.a", "libbsd.a", "libthin.a", "librockCompiler.a", "ck/lib/libutility.a"} {
		m, _, err := compareArchiveObjects(testenv.Testdata(n), "LLVMInitialize")
		if err != nil || m == 0 {
			t.Errorf("%s: %d members, %v", n, m, err)
		}
	}
	// The filter: librockCompiler.a's members reference LLVMInitialize*.
	a, err := elfx.OpenArchive(testenv.Testdata("librockCompiler.a"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	n := 0
	for i := range a.Members {
		sr, _ := a.Open(i)
		got, _ := scanObject(sr, sr.Size(), "LLVMInitialize")
		for _, s := range got {
			if !strings.HasPrefix(s.Name, "LLVMInitialize") {
				t.Errorf("%s does not start with the prefix", s.Name)
			}
		}
		n += len(got)
	}
	if n == 0 {
		t.Error("no LLVMInitialize* symbol in librockCompiler.a's members")
	}
}

// hostObject is archive_a.o (x86-64, little-endian), for tests that damage
// it: its bytes, its sections as debug/elf reads them, and section i's
// header in a copy b.
func hostObject(t *testing.T) (orig []byte, f *elf.File, shdr func(b []byte, i int) []byte) {
	t.Helper()
	orig = readFixture(t, "archive_a.o")
	f, err := elf.NewFile(bytes.NewReader(orig))
	if err != nil {
		t.Fatal(err)
	}
	shoff := binary.LittleEndian.Uint64(orig[40:])
	return orig, f, func(b []byte, i int) []byte { return b[shoff+uint64(i)*64:] }
}

// TestEachObjectSymbolNotPlain: damaged or unusual objects are left to
// Open (plain false, fn not called).
func TestEachObjectSymbolNotPlain(t *testing.T) {
	orig, f, shdr := hostObject(t)
	bo := binary.LittleEndian
	symtab, strtab := -1, -1
	for i, s := range f.Sections {
		if s.Type == elf.SHT_SYMTAB {
			symtab, strtab = i, int(s.Link)
		}
	}
	if symtab < 0 {
		t.Fatal("archive_a.o has no .symtab")
	}
	cases := map[string]func(b []byte) []byte{
		"shared object":      func(b []byte) []byte { bo.PutUint16(b[16:], uint16(elf.ET_DYN)); return b },
		"truncated":          func(b []byte) []byte { return b[:len(b)-10] },
		"bad version":        func(b []byte) []byte { bo.PutUint32(b[20:], 2); return b },
		"bad shstrndx":       func(b []byte) []byte { bo.PutUint16(b[62:], 0x7000); return b },
		"odd shentsize":      func(b []byte) []byte { bo.PutUint16(b[58:], 72); return b },
		"extended numbering": func(b []byte) []byte { bo.PutUint16(b[60:], 0); return b },
		"program headers":    func(b []byte) []byte { bo.PutUint16(b[56:], 1); return b },
		"compressed section": func(b []byte) []byte {
			bo.PutUint64(shdr(b, 1)[8:], bo.Uint64(shdr(b, 1)[8:])|uint64(elf.SHF_COMPRESSED))
			return b
		},
		"bad section name":       func(b []byte) []byte { bo.PutUint32(shdr(b, 1), 0xfffffff); return b },
		"symtab size":            func(b []byte) []byte { bo.PutUint64(shdr(b, symtab)[32:], bo.Uint64(shdr(b, symtab)[32:])-1); return b },
		"empty symtab":           func(b []byte) []byte { bo.PutUint64(shdr(b, symtab)[32:], 0); return b },
		"symtab past the end":    func(b []byte) []byte { bo.PutUint64(shdr(b, symtab)[24:], uint64(len(b))); return b },
		"string table link":      func(b []byte) []byte { bo.PutUint32(shdr(b, symtab)[40:], 0); return b },
		"string table nobits":    func(b []byte) []byte { bo.PutUint32(shdr(b, strtab)[4:], uint32(elf.SHT_NOBITS)); return b },
		"string table too large": func(b []byte) []byte { bo.PutUint64(shdr(b, strtab)[32:], 1<<40); return b },
		"negative offset":        func(b []byte) []byte { bo.PutUint64(shdr(b, 1)[24:], 1<<63); return b },
		"negative size":          func(b []byte) []byte { bo.PutUint64(shdr(b, 1)[32:], 1<<63); return b },
		"compressed last section": func(b []byte) []byte {
			last := len(f.Sections) - 1
			bo.PutUint64(shdr(b, last)[8:], bo.Uint64(shdr(b, last)[8:])|uint64(elf.SHF_COMPRESSED))
			return b
		},
		// A table of one entry at offset 0 (the ELF header read as a
		// section header, without names): Open refuses it.
		"section table at 0": func(b []byte) []byte {
			b = b[:64]
			bo.PutUint64(b[40:], 0)
			bo.PutUint16(b[60:], 1)
			bo.PutUint16(b[62:], 0)
			return b
		},
	}
	for name, damage := range cases {
		b := damage(bytes.Clone(orig))
		got, plain := scanObject(bytes.NewReader(b), int64(len(b)), "")
		if plain || got != nil {
			t.Errorf("%s: plain=%v with %d symbols; want it left to Open", name, plain, len(got))
		}
	}
	// A section name table that does not end in NUL: read whole, and its
	// names checked one by one (the last one is then unterminated).
	shstrndx := int(bo.Uint16(orig[62:]))
	lastName := 0
	for i := range f.Sections {
		if bo.Uint32(shdr(orig, i)) > bo.Uint32(shdr(orig, lastName)) {
			lastName = i
		}
	}
	cut := bytes.Clone(orig)
	bo.PutUint64(shdr(cut, shstrndx)[32:], bo.Uint64(shdr(cut, shstrndx)[32:])-1)
	if got, plain := scanObject(bytes.NewReader(cut), int64(len(cut)), ""); plain || got != nil {
		t.Errorf("unterminated section name: plain=%v with %d symbols", plain, len(got))
	}
	bo.PutUint32(shdr(cut, lastName), 0) // no section names the cut string
	if plain, err := compareObject(bytes.NewReader(cut), int64(len(cut)), ""); !plain || err != nil {
		t.Errorf("section name table without a final NUL: plain=%v, %v", plain, err)
	}
	// Section 0 taken for the symbol table (debug/elf takes the first
	// SHT_SYMTAB, whatever its index).
	zero := bytes.Clone(orig)
	copy(shdr(zero, 0)[:64], shdr(zero, symtab)[:64])
	bo.PutUint64(shdr(zero, 0)[32:], bo.Uint64(shdr(zero, 0)[32:])-24) // one symbol fewer than the real one
	if plain, err := compareObject(bytes.NewReader(zero), int64(len(zero)), ""); !plain || err != nil {
		t.Errorf("symbol table in section 0: plain=%v, %v", plain, err)
	}
	// An object with no section table at all is read, with no symbols,
	// as Open reads it.
	b := bytes.Clone(orig)
	bo.PutUint64(b[40:], 0)
	bo.PutUint16(b[60:], 0)
	bo.PutUint16(b[62:], 0)
	if plain, err := compareObject(bytes.NewReader(b), int64(len(b)), ""); !plain || err != nil {
		t.Errorf("no sections: plain=%v, %v", plain, err)
	}
}

// TestCorpusObjectSymbols compares the two readers on every member of
// LLVM's static archives and of the system's (glibc's libc.a among them;
// ordinary GCC and clang output: each must be plain).
func TestCorpusObjectSymbols(t *testing.T) {
	testenv.Corpus(t)
	dir := filepath.Dir(testenv.File(t, "/usr/lib/llvm-15/lib/libLLVMX86CodeGen.a", "llvm-15-dev"))
	archives, _ := filepath.Glob(filepath.Join(dir, "*.a"))
	sys, _ := filepath.Glob(filepath.Join(filepath.Dir(testenv.File(t, sysLib+"/libc.a", "libc6-dev")), "*.a"))
	for _, p := range sys {
		if b, err := os.ReadFile(p); err == nil && elfx.IsArchive(bytes.NewReader(b)) { // not libm.a, an ld script
			archives = append(archives, p)
		}
	}
	var mu sync.Mutex
	members, free := 0, 0
	fails := parallel(archives, func(p string) error {
		n, f, err := compareArchiveObjects(p, "LLVMInitialize")
		mu.Lock()
		members += n
		free += f
		mu.Unlock()
		return err
	})
	for p, err := range fails {
		t.Errorf("%s: %v", p, err)
	}
	if len(archives) < 150 || members < 5000 {
		t.Errorf("%d archives, %d ELF members: llvm-15-dev alone has 189 and 2,651, libc6-dev's libc.a 1,700", len(archives), members)
	}
	// Host code: all but a few members (a table that holds the ELF magic)
	// are told to hold no device code without Open.
	if free < members*9/10 {
		t.Errorf("ObjectWithoutDeviceCode: %d of %d members without device code", free, members)
	}
	t.Logf("EachObjectSymbol agrees with Open and Symbols on %d members of %d archives (%s and %s); %d without device code", members, len(archives)-len(fails), dir, sysLib, free)
}

// FuzzEachObjectSymbol: whatever the input, an object EachObjectSymbol
// reads is one Open and Symbols read without error, with the same symbols,
// and one ObjectWithoutDeviceCode clears has none GPUCodeObjects finds.
func FuzzEachObjectSymbol(f *testing.F) {
	for _, n := range []string{"archive_a.o", "i386.o", "be.o", "k-gfx803.o"} {
		f.Add(readFixture(f, n))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := compareObject(bytes.NewReader(b), int64(len(b)), "a"); err != nil {
			t.Fatal(err)
		}
		if _, err := deviceCodeFree(bytes.NewReader(b), int64(len(b))); err != nil {
			t.Fatal(err)
		}
	})
}

func TestObjectWithoutDeviceCode(t *testing.T) {
	for n, want := range map[string]bool{"archive_a.o": true, "i386.o": true, "be.o": true, "ck/consumer.o": true, "k-gfx803.o": false} {
		b := readFixture(t, n)
		free, err := deviceCodeFree(bytes.NewReader(b), int64(len(b)))
		if err != nil || free != want {
			t.Errorf("%s: without device code %v (want %v), %v", n, free, want, err)
		}
	}
	// composable_kernel's device library: its .hip_fatbin member has some.
	a, err := elfx.OpenArchive(testenv.Testdata("ck/lib/libdevice_gemm_operations.a"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for i, m := range a.Members {
		sr, _ := a.Open(i)
		free, err := deviceCodeFree(sr, sr.Size())
		if want := m.Name != "fatbin.S.o"; err != nil || free != want {
			t.Errorf("%s: without device code %v (want %v), %v", m.Name, free, want, err)
		}
	}
	// The ELF magic in a data section may start a raw code object.
	orig, f, shdr := hostObject(t)
	bo := binary.LittleEndian
	comment, data := f.Section(".comment"), -1
	for i, s := range f.Sections {
		if s.Name == ".data" {
			data = i
		}
	}
	if comment == nil || data < 0 || comment.Size < 4 {
		t.Fatal("archive_a.o has no .comment or .data")
	}
	b := bytes.Clone(orig)
	copy(b[comment.Offset:], elf.ELFMAG)
	if free, err := deviceCodeFree(bytes.NewReader(b), int64(len(b))); !free || err != nil {
		t.Errorf("ELF magic in .comment: without device code %v, %v (a comment is not searched)", free, err)
	}
	for i, s := range f.Sections {
		if s == comment { // named .data, it is searched
			bo.PutUint32(shdr(b, i), bo.Uint32(shdr(orig, data)))
		}
	}
	if free, _ := deviceCodeFree(bytes.NewReader(b), int64(len(b))); free {
		t.Error("ELF magic in a data section: told to hold no device code")
	}
}
