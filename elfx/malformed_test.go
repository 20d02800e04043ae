package elfx_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// openTemp writes b to a file named name in a new temporary directory and
// opens it; the file is closed when the test ends.
func openTemp(t testing.TB, name string, b []byte) (*elfx.File, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := elfx.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, p
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(testenv.Testdata(name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// exercise calls every accessor; it must never panic.
func exercise(f *elfx.File) {
	f.Interp()
	f.GNUStack()
	f.Dynamic()
	f.DynamicSymbols()
	f.Symbols()
	f.VersionDefs()
	f.VersionNeeds()
	f.GPUCodeObjects()
	f.DlopenNotes()
	f.DlopenNames()
	if t, err := f.DynamicSymbolTable(); err == nil {
		t.Lookup("foo_api")
		t.Lookup("")
		t.Undefined()
		t.DefinedWithPrefix("foo")
		t.Counts()
	}
	if d, err := f.Dynamic(); err == nil {
		d.StrTabBytes()
	}
}

func wantFormatError(t *testing.T, err error, wantOff int64, wantText string) {
	t.Helper()
	var fe *elfx.FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error = %v (%T), want *elfx.FormatError", err, err)
	}
	if wantOff >= 0 && fe.Offset != wantOff {
		t.Errorf("offset = 0x%x, want 0x%x (%v)", fe.Offset, wantOff, err)
	}
	if !strings.Contains(err.Error(), wantText) {
		t.Errorf("error %q does not mention %q", err, wantText)
	}
	if !strings.Contains(err.Error(), "fixture") {
		t.Errorf("error %q does not name the file", err)
	}
}

func TestTruncatedELFNeverPanics(t *testing.T) {
	for _, name := range []string{"libfoo.so.1", "hello", "libi386.so", "libbe.so", "libgpu.so", "k-gfx90a_xnackoff.co", "be.o"} {
		b := readFixture(t, name)
		for n := 0; n < len(b); n += 1 + n/16 {
			f, err := elfx.NewFileSize(bytes.NewReader(b[:n]), int64(n), "fixture")
			if err != nil {
				continue
			}
			exercise(f)
		}
	}
}

func TestShortHeader(t *testing.T) {
	b := readFixture(t, "libfoo.so.1")[:40]
	_, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), "fixture")
	wantFormatError(t, err, 0, "ELF header")
}

func TestBadIdent(t *testing.T) {
	b := readFixture(t, "libfoo.so.1")
	b[elf.EI_CLASS] = 7
	_, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), "fixture")
	wantFormatError(t, err, int64(elf.EI_CLASS), "unknown class")
}

// patchProg rewrites a field of the first program header of type typ.
func patchProg(t *testing.T, b []byte, typ elf.ProgType, field string, v uint64) int64 {
	t.Helper()
	ef, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	phoff := binary.LittleEndian.Uint64(b[32:])
	for i, p := range ef.Progs {
		if p.Type != typ {
			continue
		}
		base := int(phoff) + i*56
		switch field {
		case "offset":
			binary.LittleEndian.PutUint64(b[base+8:], v)
		case "filesz":
			binary.LittleEndian.PutUint64(b[base+32:], v)
		}
		return int64(p.Off)
	}
	t.Fatalf("no %v", typ)
	return 0
}

func TestDynamicOutsideFile(t *testing.T) {
	b := readFixture(t, "libfoo.so.1")
	patchProg(t, b, elf.PT_DYNAMIC, "offset", 1<<40)
	f, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), "fixture")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Dynamic()
	wantFormatError(t, err, 1<<40, "dynamic section")
}

func TestDynamicHugeSize(t *testing.T) {
	b := readFixture(t, "libfoo.so.1")
	off := patchProg(t, b, elf.PT_DYNAMIC, "filesz", 1<<62)
	f, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), "fixture")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Dynamic()
	wantFormatError(t, err, off, "exceeds limit")
}

func TestNeededOutsideStrtab(t *testing.T) {
	b := readFixture(t, "libfoo.so.1")
	f, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), "fixture")
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.Dynamic()
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range d.Entries {
		if e.Tag == elf.DT_NEEDED {
			binary.LittleEndian.PutUint64(b[d.Offset+int64(i)*16+8:], 0xfffffff)
			break
		}
	}
	f, err = elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), "fixture")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Dynamic()
	wantFormatError(t, err, d.StrTab, "DT_NEEDED string offset 0xfffffff")
}

func TestCorruptBytesNeverPanic(t *testing.T) {
	// Overwrite every 8-byte-aligned word of the headers and tables of a
	// small library with hostile values, one at a time.
	orig := readFixture(t, "libfoo.so.1")
	vals := []uint64{0, 1, 0x7fffffff, 0xffffffff, 1 << 62, ^uint64(0)}
	limit := min(len(orig), 4096)
	for off := 0; off+8 <= limit; off += 8 {
		for _, v := range vals {
			b := append([]byte(nil), orig...)
			binary.LittleEndian.PutUint64(b[off:], v)
			f, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), "fixture")
			if err != nil {
				continue
			}
			exercise(f)
		}
	}
}

func archiveFixture(t *testing.T) []byte {
	return readFixture(t, "libgnu.a")
}

func TestArchiveMalformed(t *testing.T) {
	good := archiveFixture(t)
	t.Run("bad terminator", func(t *testing.T) {
		b := append([]byte(nil), good...)
		b[8+58] = 'X'
		_, err := elfx.NewArchiveSize(bytes.NewReader(b), int64(len(b)), "fixture")
		wantFormatError(t, err, 8, "bad terminator")
	})
	t.Run("size beyond file", func(t *testing.T) {
		b := append([]byte(nil), good...)
		copy(b[8+48:8+58], "9999999999")
		_, err := elfx.NewArchiveSize(bytes.NewReader(b), int64(len(b)), "fixture")
		wantFormatError(t, err, 8, "data")
	})
	t.Run("bad size field", func(t *testing.T) {
		b := append([]byte(nil), good...)
		copy(b[8+48:8+58], "12x4      ")
		_, err := elfx.NewArchiveSize(bytes.NewReader(b), int64(len(b)), "fixture")
		wantFormatError(t, err, 8+48, "bad decimal")
	})
	t.Run("index count too large", func(t *testing.T) {
		b := append([]byte(nil), good...)
		// The first member of an `ar rcs` archive is the "/" index.
		if string(b[8:10]) != "/ " {
			t.Fatalf("first member is %q", b[8:24])
		}
		binary.BigEndian.PutUint32(b[8+60:], 0x7fffffff)
		_, err := elfx.NewArchiveSize(bytes.NewReader(b), int64(len(b)), "fixture")
		wantFormatError(t, err, 8+60, "count")
		_, err = elfx.NewArchiveMembers(bytes.NewReader(b), int64(len(b)), "fixture")
		wantFormatError(t, err, 8+60, "count")
		_, err = elfx.EachIndexName(bytes.NewReader(b), int64(len(b)), "fixture", func([]byte) bool { return true })
		wantFormatError(t, err, 8+60, "count")
	})
	t.Run("index name not terminated", func(t *testing.T) {
		b := append([]byte(nil), good...)
		size, _ := strconv.Atoi(strings.TrimSpace(string(b[8+48 : 8+58])))
		end := 8 + 60 + size // the index's last byte, its last name's NUL
		if b[end-1] != 0 {
			t.Fatalf("index ends in %q", b[end-1])
		}
		b[end-1] = 'x'
		for _, open := range []func(io.ReaderAt, int64, string) (*elfx.Archive, error){elfx.NewArchiveSize, elfx.NewArchiveMembers} {
			_, err := open(bytes.NewReader(b), int64(len(b)), "fixture")
			wantFormatError(t, err, 8+60, "not terminated")
		}
	})
	t.Run("truncations", func(t *testing.T) {
		for n := 0; n < len(good); n++ {
			sameArchive(t, good[:n])
			// The index-only reader fails cleanly or agrees with the
			// full parse wherever both succeed.
			var names []string
			ok, ierr := elfx.EachIndexName(bytes.NewReader(good[:n]), int64(n), "fixture", func(b []byte) bool { names = append(names, string(b)); return true })
			a, err := elfx.NewArchiveSize(bytes.NewReader(good[:n]), int64(n), "fixture")
			if err != nil {
				continue
			}
			var want []string
			for _, s := range a.Symbols {
				want = append(want, s.Name)
			}
			if ierr != nil || (ok && !reflect.DeepEqual(names, want)) || (!ok && len(want) > 0) {
				t.Errorf("%d bytes: index-only %v %v %v, full parse %v", n, ok, ierr, names, want)
			}
			for i := range a.Members {
				if f, err := a.OpenELF(i); err == nil {
					exercise(f)
				}
			}
		}
	})
}

// sameArchive checks that reading b's members only (ArchiveMembers)
// fails as the full parse does, or finds the same members and index.
func sameArchive(t testing.TB, b []byte) {
	t.Helper()
	full, ferr := elfx.NewArchiveSize(bytes.NewReader(b), int64(len(b)), "fixture")
	mem, merr := elfx.NewArchiveMembers(bytes.NewReader(b), int64(len(b)), "fixture")
	if (ferr == nil) != (merr == nil) || (ferr != nil && ferr.Error() != merr.Error()) {
		t.Fatalf("%d bytes: full parse says %v, members only %v", len(b), ferr, merr)
	}
	if ferr != nil {
		return
	}
	if !reflect.DeepEqual(full.Members, mem.Members) || full.HasIndex != mem.HasIndex || full.Kind != mem.Kind || mem.Symbols != nil {
		t.Fatalf("%d bytes: members only read %d members (index %v, %d symbols), full parse %d (index %v)",
			len(b), len(mem.Members), mem.HasIndex, len(mem.Symbols), len(full.Members), full.HasIndex)
	}
}

func TestBundleMalformed(t *testing.T) {
	good := readFixture(t, "bundle.hipfb")
	t.Run("entry outside", func(t *testing.T) {
		b := append([]byte(nil), good...)
		binary.LittleEndian.PutUint64(b[32:], 1<<40) // first entry offset
		_, err := elfx.ParseOffloadBundle(bytes.NewReader(b), 0, int64(len(b)))
		if err == nil || !strings.Contains(err.Error(), "outside") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("count", func(t *testing.T) {
		b := append([]byte(nil), good...)
		binary.LittleEndian.PutUint64(b[24:], 1<<40)
		_, err := elfx.ParseOffloadBundle(bytes.NewReader(b), 0, int64(len(b)))
		if err == nil || !strings.Contains(err.Error(), "too large") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("not a bundle", func(t *testing.T) {
		_, err := elfx.ParseOffloadBundle(bytes.NewReader(good[1:]), 0, int64(len(good)-1))
		if !errors.Is(err, elfx.ErrNoBundle) {
			t.Errorf("err = %v, want ErrNoBundle", err)
		}
	})
	t.Run("truncations", func(t *testing.T) {
		for n := 0; n < len(good); n += 7 {
			elfx.ParseOffloadBundle(bytes.NewReader(good[:n]), 0, int64(n))
		}
	})
}

// TestTruncatedTablesNamed: a file cut short inside one of the tables
// debug/elf reads at open is reported at that table's offset, with its
// extent and the file's size, instead of debug/elf's bare "EOF".
func TestTruncatedTablesNamed(t *testing.T) {
	for _, name := range []string{"libfoo.so.1", "libi386.so", "libbe.so"} {
		b := readFixture(t, name)
		ef, err := elf.NewFile(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		bo := ef.ByteOrder
		var phoff, shoff uint64
		at := 52
		if ef.Class == elf.ELFCLASS32 {
			phoff, shoff, at = uint64(bo.Uint32(b[28:])), uint64(bo.Uint32(b[32:])), 40
		} else {
			phoff, shoff = bo.Uint64(b[32:]), bo.Uint64(b[40:])
		}
		phEnd := phoff + uint64(bo.Uint16(b[at+2:]))*uint64(bo.Uint16(b[at+4:]))
		shentsize, shnum := uint64(bo.Uint16(b[at+6:])), uint64(bo.Uint16(b[at+8:]))
		shEnd := shoff + shentsize*shnum
		open := func(b []byte) error {
			_, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), "fixture")
			return err
		}
		t.Run(name+"/program headers", func(t *testing.T) {
			wantFormatError(t, open(b[:phEnd-1]), int64(phoff), fmt.Sprintf("program header table: %d entries", len(ef.Progs)))
			wantFormatError(t, open(b[:phEnd-1]), -1, fmt.Sprintf("end at 0x%x, past the end of the file (%d bytes): the file is truncated", phEnd, phEnd-1))
		})
		t.Run(name+"/section headers", func(t *testing.T) {
			wantFormatError(t, open(b[:shEnd-1]), int64(shoff), fmt.Sprintf("section header table: %d entries of %d bytes end at 0x%x", shnum, shentsize, shEnd))
		})
		t.Run(name+"/offset past the end", func(t *testing.T) {
			// A table that starts past the end may as well have a corrupt
			// offset: the message says both.
			c := bytes.Clone(b)
			far := uint64(len(c) + 4096)
			if ef.Class == elf.ELFCLASS32 {
				bo.PutUint32(c[32:], uint32(far))
			} else {
				bo.PutUint64(c[40:], far)
			}
			wantFormatError(t, open(c), int64(far), fmt.Sprintf("past the end of the file (%d bytes): the file is truncated or its header is corrupt", len(c)))
			wantFormatError(t, open(b[:shEnd-1]), int64(shoff), "the file is truncated")
			if err := open(b[:shEnd-1]); strings.Contains(err.Error(), "corrupt") {
				t.Errorf("a table cut short is called corrupt: %v", err)
			}
		})
		t.Run(name+"/extended program header count", func(t *testing.T) {
			// e_phnum 0xffff (PN_XNUM): the count is section 0's sh_info,
			// and the table it makes runs past the end.
			c := bytes.Clone(b)
			bo.PutUint16(c[at+4:], 0xffff)
			info := c[shoff+28:] // ELF32 sh_info
			if ef.Class == elf.ELFCLASS64 {
				info = c[shoff+44:]
			}
			bo.PutUint32(info, 12345)
			wantFormatError(t, open(c), int64(phoff), "program header table: 12345 entries")
		})
		t.Run(name+"/section names", func(t *testing.T) {
			// The section name table moved to 8 bytes before the end.
			c := bytes.Clone(b)
			sh := c[shoff+uint64(bo.Uint16(b[at+10:]))*shentsize:]
			newOff := uint64(len(c) - 8)
			if ef.Class == elf.ELFCLASS32 {
				bo.PutUint32(sh[16:], uint32(newOff))
			} else {
				bo.PutUint64(sh[24:], newOff)
			}
			wantFormatError(t, open(c), int64(newOff), "section name table")
		})
		t.Run(name+"/extended numbering", func(t *testing.T) {
			// e_shnum 0: the count is in section 0's sh_size (at least
			// SHN_LORESERVE, or it would have fit in the header), and the
			// table runs past the end.
			c := bytes.Clone(b)
			bo.PutUint16(c[at+8:], 0)
			if ef.Class == elf.ELFCLASS32 {
				bo.PutUint32(c[shoff+20:], uint32(elf.SHN_LORESERVE))
			} else {
				bo.PutUint64(c[shoff+32:], uint64(elf.SHN_LORESERVE))
			}
			wantFormatError(t, open(c), int64(shoff), fmt.Sprintf("section header table: %d entries of %d bytes end at 0x%x", elf.SHN_LORESERVE, shentsize, shoff+shentsize*uint64(elf.SHN_LORESERVE)))
		})
	}
}

// TestHIPFatbinWithoutBundle: a .hip_fatbin section exists to carry an
// offload bundle; one without any is unreadable device code (an error at
// the section, which gpus shows as a note), while a bundle that holds only
// the host entry is a library without device code (no error).
func TestHIPFatbinWithoutBundle(t *testing.T) {
	b := readFixture(t, "libgpu.so")
	ef, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	s := ef.Section(".hip_fatbin")
	if s == nil {
		t.Fatal("libgpu.so has no .hip_fatbin")
	}
	with := func(content []byte) ([]elfx.CodeObject, error) {
		c := bytes.Clone(b)
		sec := c[s.Offset : s.Offset+s.Size]
		clear(sec)
		copy(sec, content)
		f, err := elfx.NewFileSize(bytes.NewReader(c), int64(len(c)), "fixture")
		if err != nil {
			t.Fatal(err)
		}
		return f.GPUCodeObjects()
	}
	cos, err := with(bytes.Repeat([]byte{0xee}, int(s.Size)))
	wantFormatError(t, err, int64(s.Offset), fmt.Sprintf(".hip_fatbin: %d bytes without an offload bundle in them", s.Size))
	if len(cos) != 0 {
		t.Errorf("code objects from garbage: %+v", cos)
	}
	host := []byte("__CLANG_OFFLOAD_BUNDLE__")
	id := "host-x86_64-unknown-linux-gnu"
	for _, v := range []uint64{1, 64, 0, uint64(len(id))} { // count; entry offset, size, id length
		host = binary.LittleEndian.AppendUint64(host, v)
	}
	host = append(host, id...)
	if cos, err := with(host); err != nil || len(cos) != 0 {
		t.Errorf("host-only bundle: %d code objects, %v; want none and no error", len(cos), err)
	}
}

// TestDynamicOffsetNotLoaderView: ld.so reads the dynamic entries at
// PT_DYNAMIC's address; a PT_DYNAMIC whose offset is not where its
// PT_LOAD loads that address from is malformed (read at the offset, the
// entries were not the loader's), through the section headers and
// through the segments alike.
func TestDynamicOffsetNotLoaderView(t *testing.T) {
	b := readFixture(t, "libfoo.so.1")
	f0, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), "libfoo.so.1")
	if err != nil {
		t.Fatal(err)
	}
	phoff := binary.LittleEndian.Uint64(b[32:])
	i := -1
	for j, p := range f0.Progs() {
		if p.Type == elf.PT_DYNAMIC {
			i = j
		}
	}
	if i < 0 {
		t.Fatal("libfoo.so.1 has no PT_DYNAMIC")
	}
	d0 := f0.Progs()[i]
	binary.LittleEndian.PutUint64(b[phoff+uint64(i)*56+8:], d0.Off-0x10) // p_offset
	for _, open := range []func(string) (*elfx.File, error){elfx.Open, elfx.OpenSegments} {
		_, p := openTemp(t, "libfoo.so.1", b)
		f, err := open(p)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Dynamic()
		f.Close()
		want := fmt.Sprintf("%s: malformed file at offset 0x%x: dynamic section: PT_DYNAMIC at offset 0x%x, but its address 0x%x is loaded from offset 0x%x", p, d0.Off-0x10, d0.Off-0x10, d0.Vaddr, d0.Off)
		var fe *elfx.FormatError
		if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.As(err, &fe) {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
}
