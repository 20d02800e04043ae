package elfx_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// withoutSectionHeaders writes a copy of path whose ELF header says it
// has no section headers, as sstrip leaves a file (the loader never
// reads them).
func withoutSectionHeaders(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(out, testenv.StripSectionHeaders(b), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSymbolsWithoutSectionHeaders: with its section headers stripped, a
// library's dynamic symbols, versions and lookups are what they were with
// them: found through the dynamic segment as the loader finds them. The
// fixtures cover ELF32, big-endian and SysV-hash-only files; libc,
// libstdc++ and libLLVM (GNU hash only, 3 MB of strings) real ones.
func TestSymbolsWithoutSectionHeaders(t *testing.T) {
	windowed := true // the tables are read in one piece first
	// How the stripped file and the one opened for its segments are
	// opened: as every file is, or with tiny first reads.
	open := elfx.Open
	openSegments := elfx.OpenSegments
	check := func(t *testing.T, p string) {
		orig, err := elfx.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := orig.DynamicSymbols()
		if err != nil || len(want) == 0 {
			t.Fatalf("%s: %d symbols, %v", p, len(want), err)
		}
		wantNeeds, _ := orig.VersionNeeds()
		wantDefs, _ := orig.VersionDefs()
		wantTab, err := orig.DynamicSymbolTable()
		if err != nil {
			t.Fatal(err)
		}

		stripped := withoutSectionHeaders(t, p)
		f, err := open(stripped)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.ELF().Sections) != 0 || len(f.SymbolSections()) < 3 || f.SymbolSections()[0].Type != elf.SHT_NULL {
			t.Errorf("%s: %d section headers, %d sections from the dynamic segment", p, len(f.ELF().Sections), len(f.SymbolSections()))
		}
		got, err := f.DynamicSymbols()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if !reflect.DeepEqual(got, want) {
			n := 0
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] && n < 3 {
					t.Errorf("%s: symbol %d: %+v, want %+v", p, i+1, got[i], want[i])
					n++
				}
			}
			t.Errorf("%s: %d symbols without section headers, %d with", p, len(got), len(want))
		}
		needs, err := f.VersionNeeds()
		if err != nil || !reflect.DeepEqual(needs, wantNeeds) {
			t.Errorf("%s: version needs %v, %v; want %v", p, needs, err, wantNeeds)
		}
		defs, err := f.VersionDefs()
		if err != nil || !reflect.DeepEqual(defs, wantDefs) {
			t.Errorf("%s: version defs %v, %v; want %v", p, defs, err, wantDefs)
		}
		tab, err := f.DynamicSymbolTable()
		if err != nil {
			t.Fatal(err)
		}
		if tab.Len() != wantTab.Len() {
			t.Errorf("%s: table of %d, want %d", p, tab.Len(), wantTab.Len())
		}
		// Every defined name is found by the hash lookup, as before.
		for _, s := range want {
			if !s.Defined() {
				continue
			}
			if g, w := tab.Lookup(s.Name), wantTab.Lookup(s.Name); !reflect.DeepEqual(g, w) {
				t.Errorf("%s: Lookup(%s) = %v, want %v", p, s.Name, g, w)
				break
			}
		}
		f.Close()
		// Opened for what the loader reads, the file with its section
		// headers gives the same table, and its section header table is
		// taken as it is (no parse of it per file).
		seg, err := openSegments(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := seg.SectionHeaderError(); err != nil || !seg.PlainSectionHeaders() {
			t.Errorf("%s: section header table: %v, taken as it is: %v", p, err, seg.PlainSectionHeaders())
		}
		segTab, err := seg.DynamicSymbolTable()
		if err != nil {
			t.Fatal(err)
		}
		// The tables were read once, in one piece, to find them and to
		// make the table (not in pieces and then again), or mapped; on a
		// 32-bit host, which maps nothing, tables over 256 KiB are read
		// one by one.
		if windowed && !segTab.ViewsWindow(seg) && !segTab.Mapped() && !(strconv.IntSize == 32 && segTab.HeapBytes() > 256<<10) {
			t.Errorf("%s: segments only: the table is not the bytes read to find it", p)
		}
		if segTab.Len() != wantTab.Len() || !reflect.DeepEqual(segTab.VersionNeeds(), wantNeeds) || !reflect.DeepEqual(segTab.VersionDefs(), wantDefs) {
			t.Errorf("%s: segments only: table of %d, needs %v, defs %v", p, segTab.Len(), segTab.VersionNeeds(), segTab.VersionDefs())
		}
		if !reflect.DeepEqual(segTab.Undefined(), wantTab.Undefined()) {
			t.Errorf("%s: segments only: undefined symbols differ", p)
		}
		for _, s := range want {
			if g, w := segTab.Lookup(s.Name), wantTab.Lookup(s.Name); s.Defined() && !reflect.DeepEqual(g, w) {
				t.Errorf("%s: segments only: Lookup(%s) = %v, want %v", p, s.Name, g, w)
				break
			}
		}
		seg.Close()
		orig.Close()
	}
	for _, n := range []string{"libfoo.so.1", "libbe.so", "libi386.so", "libsysv.so"} {
		check(t, testenv.Testdata(n))
	}
	// The tables are read in growing pieces: starting from one byte (one
	// chain entry), every read that follows is taken.
	t.Run("tiny reads", func(t *testing.T) {
		open = func(p string) (*elfx.File, error) { return elfx.OpenTinyReads(p, false) }
		openSegments = func(p string) (*elfx.File, error) { return elfx.OpenTinyReads(p, true) }
		windowed = false
		defer func() { open, openSegments, windowed = elfx.Open, elfx.OpenSegments, true }()
		for _, n := range []string{"libfoo.so.1", "libbe.so", "libi386.so"} {
			check(t, testenv.Testdata(n))
		}
		check(t, testenv.File(t, "/usr/lib/x86_64-linux-gnu/libc.so.6", "libc6"))
	})
	// Real libraries: the CI tier has them.
	for p, pkg := range map[string]string{"/usr/lib/x86_64-linux-gnu/libc.so.6": "libc6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6": "libstdc++6",
		"/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1": "libllvm15"} {
		t.Run(filepath.Base(p), func(t *testing.T) { check(t, testenv.File(t, p, pkg)) })
	}
}

// TestGPUCodeWithoutSectionHeaders: a host library stripped of its
// section headers still shows the device code it carries (an offload
// bundle, a raw code object), found in its loadable segments, with the
// same offsets, sizes and targets as through its sections.
func TestGPUCodeWithoutSectionHeaders(t *testing.T) {
	type key struct {
		container, target string
		off, size         int64
	}
	keys := func(t *testing.T, p string) []key {
		f, err := elfx.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cos, err := f.GPUCodeObjects()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var out []key
		for _, c := range cos {
			out = append(out, key{c.Container, c.TargetID, c.Offset, c.Size})
		}
		return out
	}
	check := func(t *testing.T, p string, code bool) {
		want := keys(t, p)
		if (len(want) > 0) != code {
			t.Fatalf("%s: %d code objects with section headers", p, len(want))
		}
		if got := keys(t, withoutSectionHeaders(t, p)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: without section headers %v, with %v", p, got, want)
		}
	}
	check(t, testenv.Testdata("libgpu.so"), true)
	check(t, testenv.Testdata("libraw.so"), true)
	// libhsa-runtime64 embeds 29 raw code objects; libamd_comgr holds none
	// but has the bundle magic as a string, which is not a bundle.
	for _, c := range []struct {
		path, pkg string
		code      bool
	}{{"/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1", "libhsa-runtime64-1", true}, {"/usr/lib/x86_64-linux-gnu/libamd_comgr.so.2", "libamd-comgr2", false}} {
		t.Run(filepath.Base(c.path), func(t *testing.T) { check(t, testenv.File(t, c.path, c.pkg), c.code) })
	}
}

// TestOpenSegments: a file opened for what the loader reads has no
// sections and the same header, interpreter and dynamic section as when
// opened whole (ELF32, big-endian and ELF64 fixtures, and real libraries),
// and a section header table that runs past the end of the file, which
// Open refuses, does not stop it, as it does not stop ld.so.
func TestOpenSegments(t *testing.T) {
	files := []string{testenv.Testdata("libfoo.so.1"), testenv.Testdata("libi386.so"), testenv.Testdata("libbe.so"), testenv.Testdata("hello")}
	for _, p := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"} {
		if _, err := os.Stat(p); err == nil {
			files = append(files, p)
		}
	}
	type view struct {
		Header  elfx.Header
		Interp  string
		Dynamic *elfx.Dynamic
	}
	read := func(f *elfx.File) view {
		t.Helper()
		v := view{Header: f.Header}
		var err error
		if v.Interp, err = f.Interp(); err != nil {
			t.Fatal(err)
		}
		if v.Dynamic, err = f.Dynamic(); err != nil {
			t.Fatal(err)
		}
		v.Dynamic = v.Dynamic.Detached()
		return v
	}
	for _, p := range files {
		whole, err := elfx.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		want := read(whole)
		whole.Close()
		f, err := elfx.OpenSegments(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if n := len(f.ELF().Sections); n != 0 {
			t.Errorf("%s: %d sections read", p, n)
		}
		if got := read(f); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: segments only\n%+v\nwhole\n%+v", p, got, want)
		}
		f.Close()
	}
	// The section header table past the end of the file.
	b, err := os.ReadFile(testenv.Testdata("libfoo.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	binary.LittleEndian.PutUint64(b[40:], uint64(len(b))+4096)
	p := filepath.Join(t.TempDir(), "libfoo.so.1")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := elfx.Open(p); err == nil {
		t.Error("Open accepted a section header table past the end")
	}
	f, err := elfx.OpenSegments(p)
	if err != nil {
		t.Fatalf("OpenSegments: %v", err)
	}
	defer f.Close()
	if d, err := f.Dynamic(); err != nil || d.Soname != "libfoo.so.1" {
		t.Errorf("dynamic section %+v, %v", d, err)
	}
}

// patched writes a copy of the fixture name with edit applied to its bytes.
func patched(t *testing.T, name string, edit func(b []byte)) string {
	t.Helper()
	b, err := os.ReadFile(testenv.Testdata(name))
	if err != nil {
		t.Fatal(err)
	}
	edit(b)
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// dynEntry is the file offset of the first dynamic entry tagged tag in
// the ELF64 little-endian fixture b.
func dynEntry(t *testing.T, b []byte, tag elf.DynTag) int {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_DYNAMIC {
			continue
		}
		for off := p.Off; off+16 <= p.Off+p.Filesz; off += 16 {
			if elf.DynTag(binary.LittleEndian.Uint64(b[off:])) == tag {
				return int(off)
			}
		}
	}
	t.Fatalf("no %v", tag)
	return 0
}

// TestOpenSegmentsWithoutHashTable: a library whose dynamic segment has no
// hash table (nothing to count its symbols by) but whose section headers
// have a .dynsym still gives its symbols when opened for what the loader
// reads: the section headers are read for them.
func TestOpenSegmentsWithoutHashTable(t *testing.T) {
	p := patched(t, "libfoo.so.1", func(b []byte) {
		binary.LittleEndian.PutUint64(b[dynEntry(t, b, elf.DT_GNU_HASH):], uint64(elf.DT_DEBUG))
	})
	whole, err := elfx.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	want, err := whole.DynamicSymbolTable()
	if err != nil || want.Len() < 2 {
		t.Fatalf("Open: table of %d, %v", want.Len(), err)
	}
	f, err := elfx.OpenSegments(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := f.DynamicSymbolTable()
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != want.Len() || !reflect.DeepEqual(got.Undefined(), want.Undefined()) {
		t.Errorf("segments only: table of %d, want %d", got.Len(), want.Len())
	}
	if err := f.SectionHeaderError(); err != nil {
		t.Errorf("SectionHeaderError: %v", err)
	}
}

// TestSectionHeaderError: a file opened for what the loader reads still
// reports what Open, and the symbol tables read through the section
// headers, would: the same error, or none.
func TestSectionHeaderError(t *testing.T) {
	shdr := func(b []byte, typ elf.SectionType) []byte {
		shoff, shnum := binary.LittleEndian.Uint64(b[40:]), binary.LittleEndian.Uint16(b[60:])
		for i := range uint64(shnum) {
			h := b[shoff+i*64:]
			if elf.SectionType(binary.LittleEndian.Uint32(h[4:])) == typ {
				return h
			}
		}
		t.Fatalf("no %v section", typ)
		return nil
	}
	for _, c := range []struct {
		name  string
		edit  func(b []byte)
		plain bool // taken as it is, without a parse
		bad   bool
	}{
		{"intact", func([]byte) {}, true, false},
		{"table past the end", func(b []byte) { binary.LittleEndian.PutUint64(b[40:], uint64(len(b))+4096) }, false, true},
		{"name table index out of range", func(b []byte) { binary.LittleEndian.PutUint16(b[62:], 999) }, false, true},
		{"name index past the name table", func(b []byte) { binary.LittleEndian.PutUint32(shdr(b, elf.SHT_GNU_HASH), 1<<20) }, false, true},
		{".gnu.hash header past the end", func(b []byte) { binary.LittleEndian.PutUint64(shdr(b, elf.SHT_GNU_HASH)[24:], uint64(len(b))) }, false, true},
		{".gnu.version_d header at the end", func(b []byte) { binary.LittleEndian.PutUint64(shdr(b, elf.SHT_GNU_VERDEF)[24:], uint64(len(b))-8) }, false, true},
		// Not where the dynamic segment has it, but read without error
		// through the section header: parsed, no error.
		{".gnu.version_d header elsewhere", func(b []byte) { binary.LittleEndian.PutUint64(shdr(b, elf.SHT_GNU_VERDEF)[24:], 0x40) }, false, false},
		{".dynsym linked to no string table", func(b []byte) { binary.LittleEndian.PutUint32(shdr(b, elf.SHT_DYNSYM)[40:], 0) }, false, true},
		// Odd, but what Open accepts: no error after the parse.
		{".comment moved", func(b []byte) { binary.LittleEndian.PutUint64(shdr(b, elf.SHT_PROGBITS)[32:], 1<<40) }, true, false},
		{"a larger entry size", func(b []byte) { binary.LittleEndian.PutUint16(b[58:], 65) }, false, true},
		{"no section name table", func(b []byte) { binary.LittleEndian.PutUint16(b[62:], 0) }, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := patched(t, "libfoo.so.1", c.edit)
			var want error
			if whole, err := elfx.Open(p); err != nil {
				want = err
			} else {
				_, want = whole.DynamicSymbolTable()
				if err := whole.SectionHeaderError(); err != nil {
					t.Errorf("SectionHeaderError on a file opened whole: %v", err)
				}
				whole.Close()
			}
			if (want != nil) != c.bad {
				t.Fatalf("Open and its table: %v, want an error: %v", want, c.bad)
			}
			f, err := elfx.OpenSegments(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if got := f.PlainSectionHeaders(); got != c.plain {
				t.Errorf("taken as it is: %v, want %v", got, c.plain)
			}
			got := f.SectionHeaderError()
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("SectionHeaderError = %v\nwant %v", got, want)
			}
			if got != nil && !strings.Contains(got.Error(), p) {
				t.Errorf("the error does not name the file: %v", got)
			}
		})
	}
}

// TestBloomWords: a .gnu.hash whose bloom filter does not have a power
// of two words (glibc's ld.so asserts it has) is malformed, read through
// the section headers or the dynamic segment, in ELF64 and ELF32 files;
// other counts that fit the section are read.
func TestBloomWords(t *testing.T) {
	for _, c := range []struct {
		name  string
		words uint32
		bad   bool
	}{
		{"libfoo.so.1", 3, true},
		{"libfoo.so.1", 2, false},
		{"libi386.so", 3, true},
		{"libi386.so", 1, false},
	} {
		var at uint64
		p := patched(t, c.name, func(b []byte) {
			ef, err := elf.NewFile(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			at = ef.Section(".gnu.hash").Offset
			binary.LittleEndian.PutUint32(b[at+8:], c.words)
		})
		for _, open := range []func(string) (*elfx.File, error){elfx.Open, elfx.OpenSegments} {
			f, err := open(p)
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.DynamicSymbolTable()
			f.Close()
			want := fmt.Sprintf("%s: malformed file at offset %#x: .gnu.hash: %d bloom words, not a power of two", p, at, c.words)
			if c.bad != (err != nil) || (c.bad && !strings.Contains(err.Error(), want)) {
				t.Errorf("%s with %d bloom words: %v", c.name, c.words, err)
			}
		}
	}
}

// TestUnsearchedHashTable: ld.so looks symbols up only through the hash
// table the dynamic section names (DT_GNU_HASH, else DT_HASH), and skips an
// object whose table has no buckets or that has none (glibc's
// do_lookup_x); such a library is read without error, binds nothing
// (Searched, Binds), and still lists its definitions by name (Lookup).
// symcheck's TestUnsearchedLibraryRealLoader runs the real loader on the
// same edits.
func TestUnsearchedHashTable(t *testing.T) {
	// hashAt is the file offset of the first section of type typ.
	hashAt := func(b []byte, typ elf.SectionType) int {
		f, err := elf.NewFile(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		s := f.SectionByType(typ)
		if s == nil {
			t.Fatalf("no %v", typ)
		}
		return int(s.Offset)
	}
	for _, c := range []struct {
		name, file, symbol string
		edit               func(b []byte)
		searched           bool
	}{
		{"GNU hash", "libfoo.so.1", "foo_sqrt", func([]byte) {}, true},
		{"GNU hash without buckets", "libfoo.so.1", "foo_sqrt", func(b []byte) { binary.LittleEndian.PutUint32(b[hashAt(b, elf.SHT_GNU_HASH):], 0) }, false},
		{"GNU hash without buckets or filter", "libfoo.so.1", "foo_sqrt", func(b []byte) {
			binary.LittleEndian.PutUint32(b[hashAt(b, elf.SHT_GNU_HASH):], 0)
			binary.LittleEndian.PutUint32(b[hashAt(b, elf.SHT_GNU_HASH)+8:], 0)
		}, false},
		{"no DT_GNU_HASH (its section still listed)", "libfoo.so.1", "foo_sqrt", func(b []byte) {
			binary.LittleEndian.PutUint64(b[dynEntry(t, b, elf.DT_GNU_HASH):], uint64(elf.DT_DEBUG))
		}, false},
		{"DT_GNU_HASH whose section header is not .gnu.hash (searched by name)", "libfoo.so.1", "foo_sqrt", func(b []byte) {
			shoff, shnum := binary.LittleEndian.Uint64(b[40:]), binary.LittleEndian.Uint16(b[60:])
			for i := range uint64(shnum) {
				if h := b[shoff+i*64:]; elf.SectionType(binary.LittleEndian.Uint32(h[4:])) == elf.SHT_GNU_HASH {
					binary.LittleEndian.PutUint32(h[4:], uint32(elf.SHT_PROGBITS))
				}
			}
		}, true},
		{"SysV hash", "libsysv.so", "foo_sqrt", func([]byte) {}, true},
		{"SysV hash without buckets", "libsysv.so", "foo_sqrt", func(b []byte) { binary.LittleEndian.PutUint32(b[hashAt(b, elf.SHT_HASH):], 0) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := patched(t, c.file, c.edit)
			for _, open := range []func(string) (*elfx.File, error){elfx.Open, elfx.OpenSegments} {
				f, err := open(p)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				tab, err := f.DynamicSymbolTable()
				if err != nil {
					t.Fatalf("DynamicSymbolTable: %v", err)
				}
				if got := tab.Searched(); got != c.searched {
					t.Errorf("Searched = %v, want %v", got, c.searched)
				}
				k := elfx.NewKey(c.symbol)
				if binds, defined := tab.Binds(&k, ""); binds != c.searched || defined != c.searched {
					t.Errorf("Binds(%s) = %v, %v, want %v", c.symbol, binds, defined, c.searched)
				}
				if err := f.SectionHeaderError(); err != nil {
					t.Errorf("SectionHeaderError: %v", err)
				}
			}
			// Through the section headers the definition is still found by
			// name, for messages that say why nothing binds to it.
			f, err := elfx.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			tab, err := f.DynamicSymbolTable()
			if err != nil {
				t.Fatal(err)
			}
			if len(tab.Lookup(c.symbol)) == 0 {
				t.Errorf("Lookup(%s) found nothing", c.symbol)
			}
		})
	}
}
