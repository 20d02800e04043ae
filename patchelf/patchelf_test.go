package patchelf_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
)

func copyFixture(t testing.TB, name string) string {
	t.Helper()
	return copyFile(t, testenv.Testdata(name))
}

// copyFile copies src into a new temporary directory, streaming it
// (copy_file_range where the kernel has it: a 1.3 GB library is never in
// the test's memory).
func copyFile(t testing.TB, src string) string {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	p := filepath.Join(t.TempDir(), filepath.Base(src))
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func edit(t *testing.T, path string, edits ...patchelf.Edit) *patchelf.Plan {
	t.Helper()
	p, err := patchelf.EditFile(path, edits, patchelf.Options{}, patchelf.WriteOptions{})
	if err != nil {
		t.Fatalf("%v: %v", edits, err)
	}
	return p
}

type state struct {
	needed           []string
	soname, rpath    string
	hasRPath, hasRun bool
	interp           string
	flags1           elf.DynFlag1
	debug            bool
	osabi            elf.OSABI
	stack            elfx.Stack
	size             int64
}

func read(t *testing.T, path string) state {
	t.Helper()
	f, err := elfx.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var s state
	s.interp, _ = f.Interp()
	s.osabi, s.stack, s.size = f.OSABI, f.GNUStack(), f.Size
	d, err := f.Dynamic()
	if err != nil {
		return s
	}
	s.needed, s.soname = d.Needed, d.Soname
	s.hasRPath, s.hasRun = d.HasRPath, d.HasRunPath
	s.rpath = d.RunPath
	if d.HasRPath {
		s.rpath = d.RPath
	}
	s.flags1 = d.Flags1
	_, s.debug = d.Value(elf.DT_DEBUG)
	return s
}

const long = "/opt/rocm-6.2.2/lib:/opt/rocm-6.2.2/llvm/lib:/nix/store/0123456789abcdefghijklmnopqrstuv-rocm-runtime/lib"

func TestEditsVisibleOnEveryFixture(t *testing.T) {
	for _, name := range []string{"libfoo.so.1", "hello", "libi386.so", "libbe.so", "libsysv.so", "libgpu.so"} {
		t.Run(name, func(t *testing.T) {
			p := copyFixture(t, name)
			before := read(t, p)
			edit(t, p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: long})
			if s := read(t, p); s.rpath != long || !s.hasRun || s.hasRPath {
				t.Errorf("set-rpath: %+v", s)
			}
			edit(t, p, patchelf.Edit{Kind: patchelf.KindAddNeeded, Arg: "libamdhip64.so.6"})
			if s := read(t, p); len(s.needed) != len(before.needed)+1 || s.needed[0] != "libamdhip64.so.6" {
				t.Errorf("add-needed: %v", s.needed)
			}
			edit(t, p, patchelf.Edit{Kind: patchelf.KindReplaceNeeded, Arg: "libamdhip64.so.6", Arg2: "libamdhip64.so.5"})
			if s := read(t, p); s.needed[0] != "libamdhip64.so.5" {
				t.Errorf("replace-needed: %v", s.needed)
			}
			edit(t, p, patchelf.Edit{Kind: patchelf.KindSetSoname, Arg: "librenamed-with-a-much-longer-name.so.42"})
			if s := read(t, p); s.soname != "librenamed-with-a-much-longer-name.so.42" {
				t.Errorf("set-soname: %q", s.soname)
			}
			edit(t, p, patchelf.Edit{Kind: patchelf.KindNoDefaultLib}, patchelf.Edit{Kind: patchelf.KindAddDebugTag})
			if s := read(t, p); s.flags1&elf.DF_1_NODEFLIB == 0 || !s.debug {
				t.Errorf("nodeflib/debug: %+v", s)
			}
			edit(t, p, patchelf.Edit{Kind: patchelf.KindRemoveNeeded, Arg: "libamdhip64.so.5"}, patchelf.Edit{Kind: patchelf.KindRemoveRPath})
			if s := read(t, p); len(s.needed) != len(before.needed) || s.rpath != "" || s.hasRun {
				t.Errorf("remove: %+v", s)
			}
			edit(t, p, patchelf.Edit{Kind: patchelf.KindSetExecStack})
			if s := read(t, p); !s.stack.Present || !s.stack.Executable {
				t.Errorf("set-execstack: %+v", s.stack)
			}
			edit(t, p, patchelf.Edit{Kind: patchelf.KindClearExecStack}, patchelf.Edit{Kind: patchelf.KindSetOSABI, Arg: "linux"})
			if s := read(t, p); s.stack.Executable || s.osabi != elf.ELFOSABI_LINUX {
				t.Errorf("clear-execstack/os-abi: %+v", s)
			}
			if before.interp != "" {
				edit(t, p, patchelf.Edit{Kind: patchelf.KindSetInterpreter, Arg: "/lib64/../lib64/../lib64/ld-linux-x86-64.so.2"})
				if s := read(t, p); s.interp != "/lib64/../lib64/../lib64/ld-linux-x86-64.so.2" {
					t.Errorf("set-interpreter: %q", s.interp)
				}
			}
		})
	}
}

func TestRepeatedEditsDoNotGrow(t *testing.T) {
	p := copyFixture(t, "libfoo.so.1")
	edit(t, p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: long}, patchelf.Edit{Kind: patchelf.KindAddNeeded, Arg: "libx.so.1"})
	size := read(t, p).size
	for i := 0; i < 3; i++ {
		plan := edit(t, p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: long}, patchelf.Edit{Kind: patchelf.KindAddNeeded, Arg: "libx.so.1"})
		if plan.Changed || read(t, p).size != size {
			t.Fatalf("repeat %d: changed=%v size %d → %d", i, plan.Changed, size, read(t, p).size)
		}
	}
	// A shorter run path is written in place: no growth, no new segment.
	q := copyFixture(t, "libfoo.so.1")
	plan := edit(t, q, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: "$ORIGIN"})
	if plan.AppendSize != 0 || read(t, q).size != plan.OldSize || read(t, q).rpath != "$ORIGIN" {
		t.Errorf("shorter rpath grew the file: %+v", plan)
	}
}

// TestSecondGrowingEditExtendsInPlace: after a growing edit has put
// .dynstr at the end of the file in a segment of its own, a second growing
// edit extends that segment by the new strings instead of appending
// another copy of the whole table (patchelf grows the file by the table on
// every such edit), on every byte order and class.
func TestSecondGrowingEditExtendsInPlace(t *testing.T) {
	for _, name := range []string{"libfoo.so.1", "hello", "libi386.so", "libbe.so", "libsysv.so"} {
		t.Run(name, func(t *testing.T) {
			p := copyFixture(t, name)
			first := edit(t, p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: long})
			if first.Extended != "" || first.AppendSize == 0 {
				t.Fatalf("first growing edit: %+v", first)
			}
			phnum := func() int {
				f, err := elfx.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				return len(f.Progs())
			}
			progs := phnum()
			second := long + ":/opt/rocm-6.2.2/lib64:/a/second/edit/grows/the/table/where/it/is"
			plan := edit(t, p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: second}, patchelf.Edit{Kind: patchelf.KindAddNeeded, Arg: "libextra-needed.so.3"})
			// (The section header table, which the first edit put at the
			// end of the file, moves past the grown table.)
			if plan.Extended != ".dynstr" || !slices.Equal(plan.Moved, []string{"section headers"}) {
				t.Fatalf("second growing edit did not extend .dynstr in place: %+v", plan)
			}
			want := int64(len(second)+1+len("libextra-needed.so.3")+1) + 7 // and the table's alignment
			if got := plan.NewSize - plan.OldSize; got > want {
				t.Errorf("file grew by %d bytes, want at most the %d bytes of new strings", got, want)
			}
			s := read(t, p)
			if s.rpath != second || s.needed[0] != "libextra-needed.so.3" || s.size != plan.NewSize {
				t.Errorf("after the second edit: %+v", s)
			}
			if n := phnum(); n != progs {
				t.Errorf("%d program headers, want %d (no new segment)", n, progs)
			}
			// readelf is optional for a Go-only `go test`, required in the
			// CI tier (where a missing one fails instead of passing quietly).
			readelf, err := exec.LookPath("readelf")
			if err != nil && testenv.RequireAll() {
				t.Fatalf("readelf (binutils) is missing: %v", err)
			}
			if err == nil {
				out, err := exec.Command(readelf, "-a", "-W", p).CombinedOutput()
				if err != nil || bytes.Contains(out, []byte("Warning")) {
					t.Errorf("readelf -a: %v\n%s", err, out)
				}
			}
		})
	}
}

func TestCombinedEqualsSequential(t *testing.T) {
	edits := []patchelf.Edit{
		{Kind: patchelf.KindSetRPath, Arg: long},
		{Kind: patchelf.KindReplaceNeeded, Arg: "libm.so.6", Arg2: "libmvec.so.1"},
		{Kind: patchelf.KindAddNeeded, Arg: "libhipblas.so.2"},
		{Kind: patchelf.KindSetSoname, Arg: "libcombined.so.9"},
	}
	a, b := copyFixture(t, "libfoo.so.1"), copyFixture(t, "libfoo.so.1")
	edit(t, a, edits...)
	for _, e := range edits {
		edit(t, b, e)
	}
	sa, sb := read(t, a), read(t, b)
	sa.size, sb.size = 0, 0
	if strings.Join(sa.needed, ",") != strings.Join(sb.needed, ",") || sa.rpath != sb.rpath || sa.soname != sb.soname {
		t.Errorf("combined %+v\nsequential %+v", sa, sb)
	}
	// The patchelf 0.14.3 bug: --set-rpath X --replace-needed A B wrote RUNPATH = B.
	if sa.rpath != long {
		t.Errorf("RUNPATH = %q after a combined set-rpath/replace-needed, want %q", sa.rpath, long)
	}
	// .gnu.version_r follows the renamed NEEDED entry.
	f, _ := elfx.Open(a)
	defer f.Close()
	needs, _ := f.VersionNeeds()
	if len(needs) != 1 || needs[0].File != "libmvec.so.1" {
		t.Errorf(".gnu.version_r = %+v", needs)
	}
}

func TestForceRPathAndConversion(t *testing.T) {
	p := copyFixture(t, "hello") // has DT_RPATH
	edit(t, p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: "/x"})
	if s := read(t, p); !s.hasRun || s.hasRPath {
		t.Errorf("set-rpath should convert DT_RPATH to DT_RUNPATH: %+v", s)
	}
	q := copyFixture(t, "libfoo.so.1") // has DT_RUNPATH
	if _, err := patchelf.EditFile(q, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: "/y"}}, patchelf.Options{ForceRPath: true}, patchelf.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if s := read(t, q); s.hasRun || !s.hasRPath || s.rpath != "/y" {
		t.Errorf("--force-rpath: %+v", s)
	}
}

func TestErrorsLeaveFileUntouched(t *testing.T) {
	for _, tt := range []struct {
		file string
		e    patchelf.Edit
		msg  string
	}{
		{"libfoo.so.1", patchelf.Edit{Kind: patchelf.KindSetInterpreter, Arg: "/lib/ld.so"}, "no program interpreter (no PT_INTERP) to replace"},
		{"archive_a.o", patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: "/x"}, "relocatable object"},
		{"libfoo.so.1", patchelf.Edit{Kind: patchelf.KindSetOSABI, Arg: "plan9"}, "unrecognized OS ABI"},
	} {
		p := copyFixture(t, tt.file)
		orig, _ := os.ReadFile(p)
		err := editErr(p, tt.e)
		if err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s %v: err = %v, want %q", tt.file, tt.e, err, tt.msg)
		}
		now, _ := os.ReadFile(p)
		if !bytes.Equal(orig, now) {
			t.Errorf("%s changed after a failed edit", tt.file)
		}
		onlyFile(t, p)
	}
	// The copy made while planning is removed when nothing changes, and
	// renamed into place (not left beside it) when something does.
	p := copyFixture(t, "libfoo.so.1")
	rp := read(t, p).rpath
	if plan, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: rp}}, patchelf.Options{}, patchelf.WriteOptions{}); err != nil || plan.Changed {
		t.Fatalf("no-op edit: changed %v, err %v", plan != nil && plan.Changed, err)
	}
	onlyFile(t, p)
	edit(t, p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: long})
	onlyFile(t, p)
}

// TestMalformedInputRefused: a file whose PT_LOAD segments the loader
// could not map, or whose PT_DYNAMIC lies outside them, that marks a
// loaded section compressed, whose section header for a dynamic table
// has the wrong type or disagrees with the segment that loads it or the
// dynamic entry that points at it, whose version requirements
// cannot be read, or that names a symbol past the end of .dynstr (a grown
// table would change the name), is refused as malformed, naming the header
// and its offset, before anything is planned (Verify would otherwise
// blame the edit for what the input had), and the file is left as it was.
func TestMalformedInputRefused(t *testing.T) {
	orig, f := readFixture(t, "libfoo.so.1")
	// The second PT_LOAD, the one after it and PT_DYNAMIC (ELF64
	// little-endian: 56-byte headers, p_offset at 8, p_vaddr at 16,
	// p_filesz at 32, p_align at 48), and .dynsym's section header
	// (64 bytes, sh_flags at 8).
	le := binary.LittleEndian
	phoff, shoff := le.Uint64(orig[32:]), le.Uint64(orig[40:])
	var loads []int
	dynamic, note, relro := -1, -1, -1
	for i, p := range f.Progs() {
		switch p.Type {
		case elf.PT_LOAD:
			loads = append(loads, i)
		case elf.PT_DYNAMIC:
			dynamic = i
		case elf.PT_NOTE:
			note = i
		case elf.PT_GNU_RELRO:
			relro = i
		}
	}
	dynsym := slices.IndexFunc(f.ELF().Sections, func(s *elf.Section) bool { return s.Name == ".dynsym" })
	dynstr := slices.IndexFunc(f.ELF().Sections, func(s *elf.Section) bool { return s.Name == ".dynstr" })
	relaDyn := slices.IndexFunc(f.ELF().Sections, func(s *elf.Section) bool { return s.Name == ".rela.dyn" })
	verneedIdx := slices.IndexFunc(f.ELF().Sections, func(s *elf.Section) bool { return s.Name == ".gnu.version_r" })
	gnuHashSec := slices.IndexFunc(f.ELF().Sections, func(s *elf.Section) bool { return s.Name == ".gnu.hash" })
	noteSec := slices.IndexFunc(f.ELF().Sections, func(s *elf.Section) bool { return s.Type == elf.SHT_NOTE && s.Flags&elf.SHF_ALLOC != 0 })
	verneed := f.ELF().Section(".gnu.version_r")
	if len(loads) < 3 || dynamic < 0 || note < 0 || relro < 0 || dynsym < 0 || dynstr < 0 || relaDyn < 0 || verneed == nil {
		t.Fatalf("libfoo.so.1 has %d PT_LOADs, PT_DYNAMIC %d, .dynsym %d, .gnu.version_r %v", len(loads), dynamic, dynsym, verneed)
	}
	ph := func(i, field int) uint64 { return phoff + uint64(i)*56 + uint64(field) }
	d, err := f.Dynamic()
	if err != nil {
		t.Fatal(err)
	}
	gnuHash := slices.IndexFunc(d.Entries, func(e elfx.DynEntry) bool { return e.Tag == elf.DT_GNU_HASH })
	if gnuHash < 0 {
		t.Fatal("libfoo.so.1 has no DT_GNU_HASH")
	}
	gnuHashAt := uint64(d.Offset) + uint64(gnuHash)*16
	jmprel := slices.IndexFunc(d.Entries, func(e elfx.DynEntry) bool { return e.Tag == elf.DT_JMPREL })
	relaPLT := slices.IndexFunc(f.ELF().Sections, func(s *elf.Section) bool { return s.Name == ".rela.plt" })
	if jmprel < 0 || relaPLT < 0 {
		t.Fatal("libfoo.so.1 has no DT_JMPREL or .rela.plt")
	}
	jmprelAt := uint64(d.Offset) + uint64(jmprel)*16
	strtabAt := uint64(d.Offset) + uint64(slices.IndexFunc(d.Entries, func(e elfx.DynEntry) bool { return e.Tag == elf.DT_STRTAB }))*16
	runpath := slices.IndexFunc(d.Entries, func(e elfx.DynEntry) bool { return e.Tag == elf.DT_RUNPATH })
	if runpath < 0 {
		t.Fatal("libfoo.so.1 has no DT_RUNPATH")
	}
	second, third := loads[1], loads[2]
	for _, tt := range []struct {
		name string
		at   uint64 // the header's offset
		what string
		mend func(b []byte)
		says string
	}{
		{"incongruent", ph(second, 0), fmt.Sprintf("program header %d", second), func(b []byte) {
			le.PutUint64(b[ph(second, 8):], le.Uint64(b[ph(second, 8):])+0x10)
		}, "not congruent"},
		{"past the end", ph(second, 0), fmt.Sprintf("program header %d", second), func(b []byte) {
			le.PutUint64(b[ph(second, 32):], uint64(len(orig)))
		}, "extends past the end of the file"},
		{"file larger than memory", ph(second, 0), fmt.Sprintf("program header %d", second), func(b []byte) {
			le.PutUint64(b[ph(second, 40):], le.Uint64(b[ph(second, 32):])-1) // p_memsz
		}, "bytes in the file but"},
		{"wraps around", ph(third, 0), fmt.Sprintf("program header %d", third), func(b []byte) {
			le.PutUint64(b[ph(third, 40):], 1<<64-0x100) // p_memsz
		}, "wrap around"},
		{"alignment", ph(second, 0), fmt.Sprintf("program header %d", second), func(b []byte) {
			le.PutUint64(b[ph(second, 48):], 0x3000)
		}, "alignment 0x3000 is not a power of two"},
		{"huge alignment", ph(second, 0), fmt.Sprintf("program header %d", second), func(b []byte) {
			le.PutUint64(b[ph(second, 48):], 1<<40)
		}, "up to 1 GiB"},
		{"dynamic outside", ph(dynamic, 0), fmt.Sprintf("program header %d", dynamic), func(b []byte) {
			le.PutUint64(b[ph(dynamic, 16):], 1<<32)
		}, "PT_DYNAMIC is not inside any PT_LOAD"},
		{"dynamic offset", ph(dynamic, 0), fmt.Sprintf("program header %d", dynamic), func(b []byte) {
			le.PutUint64(b[ph(dynamic, 8):], 0) // p_offset
		}, "is loaded from offset"},
		{"dynamic past its segment", ph(dynamic, 0), fmt.Sprintf("program header %d", dynamic), func(b []byte) {
			le.PutUint64(b[ph(dynamic, 40):], 1<<40) // p_memsz
		}, "PT_DYNAMIC is not inside any PT_LOAD"},
		{"dynamic larger in the file", ph(dynamic, 0), fmt.Sprintf("program header %d", dynamic), func(b []byte) {
			le.PutUint64(b[ph(dynamic, 32):], le.Uint64(b[ph(dynamic, 40):])+16) // p_filesz
		}, "bytes in the file but"},
		{"RELRO outside", ph(relro, 0), fmt.Sprintf("program header %d", relro), func(b []byte) {
			le.PutUint64(b[ph(relro, 16):], 1<<40) // p_vaddr
		}, "PT_GNU_RELRO at address 0x10000000000 is not inside any PT_LOAD"},
		{"dynamic over the headers", 0x40, "dynamic tables", func(b []byte) {
			le.PutUint64(b[ph(dynamic, 8):], 0x40)  // p_offset: the program headers
			le.PutUint64(b[ph(dynamic, 16):], 0x40) // p_vaddr
		}, "the dynamic section (PT_DYNAMIC) at 0x40"},
		{"second dynamic", ph(note, 0), fmt.Sprintf("program header %d", note), func(b []byte) {
			le.PutUint32(b[ph(note, 0):], uint32(elf.PT_DYNAMIC)) // p_type
		}, "a second PT_DYNAMIC"},
		{"note offset", ph(note, 0), fmt.Sprintf("program header %d", note), func(b []byte) {
			le.PutUint64(b[ph(note, 8):], le.Uint64(b[ph(note, 8):])+0x10) // p_offset
		}, "PT_NOTE at offset"},
		{"out of order", ph(third, 0), fmt.Sprintf("program header %d", third), func(b []byte) {
			le.PutUint64(b[ph(third, 16):], le.Uint64(b[ph(second, 16):]))
		}, "overlap or are out of order"},
		{"compressed .dynsym", shoff + uint64(dynsym)*64, fmt.Sprintf("section header %d (.dynsym)", dynsym), func(b []byte) {
			at := shoff + uint64(dynsym)*64 + 8
			le.PutUint64(b[at:], le.Uint64(b[at:])|uint64(elf.SHF_COMPRESSED))
		}, "SHF_ALLOC and SHF_COMPRESSED"},
		{"table offset", shoff + uint64(dynstr)*64, fmt.Sprintf("section header %d (.dynstr)", dynstr), func(b []byte) {
			at := shoff + uint64(dynstr)*64 + 24 // sh_offset
			le.PutUint64(b[at:], le.Uint64(b[at:])-0x40)
		}, "is loaded from offset"},
		{"section alignment", shoff + uint64(dynsym)*64, fmt.Sprintf("section header %d (.dynsym)", dynsym), func(b []byte) {
			le.PutUint64(b[shoff+uint64(dynsym)*64+48:], 0x6400000008) // sh_addralign
		}, "alignment 429496729608 is not a power of two"},
		{"table type", shoff + uint64(dynstr)*64, fmt.Sprintf("section header %d (.dynstr)", dynstr), func(b []byte) {
			le.PutUint32(b[shoff+uint64(dynstr)*64+4:], uint32(elf.SHT_PROGBITS)) // sh_type
		}, "type SHT_PROGBITS, want SHT_STRTAB"},
		{"table not loaded", shoff + uint64(dynstr)*64, fmt.Sprintf("section header %d (.dynstr)", dynstr), func(b []byte) {
			at := shoff + uint64(dynstr)*64 + 8 // sh_flags
			le.PutUint64(b[at:], le.Uint64(b[at:])&^uint64(elf.SHF_ALLOC))
		}, "not loaded (no SHF_ALLOC)"},
		{"table address", strtabAt, "dynamic section", func(b []byte) {
			at := shoff + uint64(dynstr)*64
			le.PutUint64(b[at+16:], le.Uint64(b[at+16:])+8) // sh_addr
			le.PutUint64(b[at+24:], le.Uint64(b[at+24:])+8) // sh_offset
		}, fmt.Sprintf("DT_STRTAB points at 0x%x, where no section header describes a table of type SHT_STRTAB", f.ELF().Sections[dynstr].Addr)},
		{"table size", shoff + uint64(dynstr)*64, fmt.Sprintf("section header %d (.dynstr)", dynstr), func(b []byte) {
			le.PutUint64(b[shoff+uint64(dynstr)*64+32:], 0) // sh_size
		}, "size 0x0, but DT_STRSZ is"},
		{"unnamed table offset", shoff + uint64(dynstr)*64, fmt.Sprintf("section header %d ()", dynstr), func(b []byte) {
			at := shoff + uint64(dynstr)*64
			le.PutUint32(b[at:], 0)                            // sh_name: ""
			le.PutUint64(b[at+24:], le.Uint64(b[at+24:])-0x40) // sh_offset
		}, "but DT_STRTAB 0x"},
		{"table link", shoff + uint64(verneedIdx)*64, fmt.Sprintf("section header %d (.gnu.version_r)", verneedIdx), func(b []byte) {
			le.PutUint32(b[shoff+uint64(verneedIdx)*64+40:], uint32(relaDyn)) // sh_link
		}, "which is not of type SHT_STRTAB"},
		{"relocation type", jmprelAt, "dynamic section", func(b []byte) {
			le.PutUint32(b[shoff+uint64(relaPLT)*64+4:], uint32(elf.SHT_PROGBITS)) // .rela.plt's sh_type
		}, "DT_JMPREL points at"},
		{"relocation link", shoff + uint64(relaDyn)*64, fmt.Sprintf("section header %d (.rela.dyn)", relaDyn), func(b []byte) {
			le.PutUint32(b[shoff+uint64(relaDyn)*64+40:], 0x400003) // sh_link
		}, "not to .dynsym"},
		{"table at 0", gnuHashAt, "dynamic section", func(b []byte) {
			le.PutUint64(b[gnuHashAt+8:], 0) // d_val
		}, "DT_GNU_HASH is 0"},
		{"unloaded table", gnuHashAt, "dynamic section", func(b []byte) {
			le.PutUint64(b[gnuHashAt+8:], 1<<40) // d_val
		}, "which no PT_LOAD loads from the file"},
		{"overlapping tables", f.ELF().Sections[dynsym].Offset, "dynamic tables", func(b []byte) {
			at := shoff + uint64(gnuHashSec)*64 + 32 // .gnu.hash's sh_size
			le.PutUint64(b[at:], le.Uint64(b[at:])+0x100)
		}, "overlap"},
		{"note over a table", f.ELF().Sections[gnuHashSec].Offset, "dynamic tables", func(b []byte) {
			at := shoff + uint64(noteSec)*64 + 32 // the note's sh_size
			le.PutUint64(b[at:], le.Uint64(b[at:])+0x200)
		}, "overlap"},
		{"undescribed table", gnuHashAt, "dynamic section", func(b []byte) {
			le.PutUint64(b[gnuHashAt+8:], le.Uint64(b[gnuHashAt+8:])+8) // d_val
		}, "DT_GNU_HASH points at"},
		{"unterminated strings", f.ELF().Sections[dynstr].Offset + f.ELF().Sections[dynstr].Size - 1, "dynamic string table", func(b []byte) {
			// The last string is DT_RUNPATH's; that entry becomes a
			// DT_DEBUG, so no entry reads the string the fault runs into.
			le.PutUint64(b[uint64(d.Offset)+uint64(runpath)*16:], uint64(elf.DT_DEBUG))
			b[f.ELF().Sections[dynstr].Offset+f.ELF().Sections[dynstr].Size-1] = 'h'
		}, "does not end in NUL"},
		{"symbol name", f.ELF().Sections[dynsym].Offset + 24, ".dynsym entry 1", func(b []byte) {
			le.PutUint32(b[f.ELF().Sections[dynsym].Offset+24:], 0x10000) // st_name
		}, "name offset 0x10000 outside the dynamic string table"},
		{"version requirement", verneed.Offset + 0x10000, "version requirements (.gnu.version_r)", func(b []byte) {
			le.PutUint32(b[verneed.Offset+8:], 0x10000) // vn_aux
		}, "auxiliary entry truncated"},
	} {
		b := bytes.Clone(orig)
		tt.mend(b)
		p := writeTemp(t, "libfoo.so.1", b)
		err := editErr(p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: long})
		want := fmt.Sprintf("%s: malformed file at offset 0x%x: %s: ", p, tt.at, tt.what)
		var fe *elfx.FormatError
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tt.says) || !errors.As(err, &fe) {
			t.Errorf("%s: err = %v, want %q...%q", tt.name, err, want, tt.says)
		}
		if now, _ := os.ReadFile(p); !bytes.Equal(now, b) {
			t.Errorf("%s: the file changed", tt.name)
		}
		onlyFile(t, p)
	}
}

// TestLargeBSSRealLoader: the segment a growing edit adds goes at the
// end of the file, not at the end of the memory image: a library with
// 100 MB of .bss grows by a page or two (it once grew by the 100 MB), and
// the real loader still runs a program that uses the array.
func TestLargeBSSRealLoader(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "big.c"), []byte("static char big[100 << 20];\nint big_at(int i) { big[i] = 7; return big[i] + big[i / 2]; }\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.c"), []byte("#include <stdio.h>\nint big_at(int);\nint main(void) { printf(\"%d\\n\", big_at((100 << 20) - 1)); return 0; }\n"), 0o644)
	lib, prog := filepath.Join(dir, "libbig.so"), filepath.Join(dir, "main")
	for _, args := range [][]string{
		{"-shared", "-fPIC", "-Wl,-soname,libbig.so", "-o", lib, filepath.Join(dir, "big.c")},
		{"-o", prog, filepath.Join(dir, "main.c"), lib},
	} {
		if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	before := read(t, lib).size
	plan := edit(t, lib, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: long}, patchelf.Edit{Kind: patchelf.KindAddNeeded, Arg: "libm.so.6"})
	if grown := plan.NewSize - before; grown <= 0 || grown > 16<<10 {
		t.Errorf("libbig.so grew by %d bytes, want at most 16 KiB", grown)
	}
	if plan.AppendOffset != (before+4095)&^4095 {
		t.Errorf("new segment at 0x%x, want the page after the file's end (size 0x%x)", plan.AppendOffset, before)
	}
	edit(t, prog, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: "$ORIGIN:" + long})
	out, err := exec.Command(prog).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "7" {
		t.Fatalf("patched program: %v\n%s", err, out)
	}
}

// TestBadInterpreterRefused: a PT_INTERP past the end of the file, of a
// size the kernel refuses, or naming nothing, is malformed, and so is a
// PT_PHDR outside every PT_LOAD; a size of 2^60 once reached a
// make() and panicked.
func TestBadInterpreterRefused(t *testing.T) {
	orig, f := readFixture(t, "hello")
	i := slices.IndexFunc(f.Progs(), func(p elf.ProgHeader) bool { return p.Type == elf.PT_INTERP })
	if i < 0 {
		t.Fatal("hello has no PT_INTERP")
	}
	phoff := binary.LittleEndian.Uint64(orig[32:])
	at := phoff + uint64(i)*56
	// A program header table the loader cannot see.
	if j := slices.IndexFunc(f.Progs(), func(p elf.ProgHeader) bool { return p.Type == elf.PT_PHDR }); j >= 0 {
		// An empty PT_PHDR read at another offset than its address.
		{
			b := bytes.Clone(orig)
			binary.LittleEndian.PutUint64(b[phoff+uint64(j)*56+16:], 0) // p_vaddr
			binary.LittleEndian.PutUint64(b[phoff+uint64(j)*56+32:], 0) // p_filesz
			p := writeTemp(t, "hello", b)
			err := editErr(p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: "/x"})
			if err == nil || !strings.Contains(err.Error(), "PT_PHDR at offset 0x40, but its address 0x0 is loaded from offset 0x0") {
				t.Errorf("PT_PHDR at address 0: err = %v", err)
			}
		}
		for _, empty := range []bool{false, true} { // an edit gives an empty PT_PHDR the table's size
			b := bytes.Clone(orig)
			binary.LittleEndian.PutUint64(b[phoff+uint64(j)*56+16:], 1<<40) // p_vaddr
			if empty {
				binary.LittleEndian.PutUint64(b[phoff+uint64(j)*56+32:], 0) // p_filesz
			}
			p := writeTemp(t, "hello", b)
			err := editErr(p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: "/x"})
			want := fmt.Sprintf("%s: malformed file at offset 0x%x: program header %d: PT_PHDR at address 0x10000000000 is not inside any PT_LOAD", p, phoff+uint64(j)*56, j)
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("PT_PHDR outside (empty %v): err = %v, want %q", empty, err, want)
			}
		}
	} else {
		t.Error("hello has no PT_PHDR")
	}
	// An interpreter name no PT_LOAD loads (ld.so reads it at its
	// address; an edit's new segment came to hold the address).
	{
		b := bytes.Clone(orig)
		binary.LittleEndian.PutUint64(b[at+16:], 1<<40) // p_vaddr
		p := writeTemp(t, "hello", b)
		err := editErr(p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: "/x"})
		want := fmt.Sprintf("%s: malformed file at offset 0x%x: program header %d: PT_INTERP at address 0x10000000000 is not inside any PT_LOAD", p, at, i)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("PT_INTERP outside: err = %v, want %q", err, want)
		}
	}
	// A section named .interp that is not one (the fuzzer named the
	// section name table so, and moving .interp rewrote its header).
	if j := slices.IndexFunc(f.ELF().Sections, func(s *elf.Section) bool { return s.Name == ".interp" }); j >= 0 {
		b := bytes.Clone(orig)
		shAt := binary.LittleEndian.Uint64(b[40:]) + uint64(j)*64
		binary.LittleEndian.PutUint32(b[shAt+4:], uint32(elf.SHT_STRTAB)) // sh_type
		p := writeTemp(t, "hello", b)
		err := editErr(p, patchelf.Edit{Kind: patchelf.KindSetInterpreter, Arg: "/lib/ld.so"})
		want := fmt.Sprintf("%s: malformed file at offset 0x%x: section header %d (.interp): type SHT_STRTAB, want SHT_PROGBITS", p, shAt, j)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf(".interp of another type: err = %v, want %q", err, want)
		}
	} else {
		t.Error("hello has no .interp")
	}
	// An interpreter name over the dynamic section: a new one is moved,
	// never written over the entries (PT_INTERP starts at another
	// section than .interp, as patchelf's contiguous-note-sections).
	if dyn := f.ELF().Section(".dynamic"); dyn != nil {
		b := bytes.Clone(orig)
		binary.LittleEndian.PutUint64(b[at+8:], dyn.Offset) // p_offset
		binary.LittleEndian.PutUint64(b[at+16:], dyn.Addr)  // p_vaddr
		p := writeTemp(t, "hello", b)
		pl, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.KindSetInterpreter, Arg: "/lib/ld.so"}}, patchelf.Options{}, patchelf.WriteOptions{})
		if err != nil || !slices.Contains(pl.Moved, ".interp") {
			t.Fatalf("PT_INTERP over .dynamic: %v (moved %v)", err, pl)
		}
		for _, pt := range pl.Patches {
			if pt.Offset < int64(dyn.Offset+dyn.Size) && int64(dyn.Offset) < pt.Offset+int64(len(pt.Data)) && pt.What == "PT_INTERP" {
				t.Errorf("the new name was written over .dynamic at 0x%x", pt.Offset)
			}
		}
		if s := read(t, p); s.interp != "/lib/ld.so" {
			t.Errorf("interpreter %q", s.interp)
		}
	} else {
		t.Error("hello has no .dynamic")
	}
	// An interpreter name over the headers: a new one would overwrite them.
	{
		b := bytes.Clone(orig)
		binary.LittleEndian.PutUint64(b[at+8:], 0x40)  // p_offset: the program headers
		binary.LittleEndian.PutUint64(b[at+16:], 0x40) // p_vaddr, where they are loaded
		p := writeTemp(t, "hello", b)
		err := editErr(p, patchelf.Edit{Kind: patchelf.KindSetInterpreter, Arg: "/lib/ld.so"})
		if err == nil || !strings.HasPrefix(err.Error(), p+": malformed file at offset 0x40: PT_INTERP: ") || !strings.Contains(err.Error(), "overlaps the ELF or program headers") {
			t.Errorf("PT_INTERP over the headers: err = %v", err)
		}
	}
	for _, tt := range []struct {
		filesz uint64
		says   string
	}{{1 << 60, "extends past the end of the file"}, {1, "2 to 4096 bytes"}, {5000, "2 to 4096 bytes"}} {
		b := bytes.Clone(orig)
		binary.LittleEndian.PutUint64(b[at+32:], tt.filesz)
		p := writeTemp(t, "hello", b)
		err := editErr(p, patchelf.Edit{Kind: patchelf.KindSetInterpreter, Arg: "/lib64/ld-linux-x86-64.so.2.long.name"})
		want := fmt.Sprintf("%s: malformed file at offset 0x%x: program header %d: PT_INTERP", p, at, i)
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("p_filesz 0x%x: err = %v, want %q...%q", tt.filesz, err, want, tt.says)
		}
	}
}

// TestOverlappingTablesRefused: without section headers an edit works
// from the loader's view, where the symbol count comes from the hash
// table; tables that overlap there are malformed (a count read from
// another table's bytes changed when the tables moved).
func TestOverlappingTablesRefused(t *testing.T) {
	orig, err := os.ReadFile(testenv.Testdata("libfoo.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	testenv.StripSectionHeaders(orig)
	f, err := elfx.NewFileSize(bytes.NewReader(orig), int64(len(orig)), "libfoo.so.1")
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.Dynamic()
	if err != nil {
		t.Fatal(err)
	}
	symtab, _ := d.Value(elf.DT_SYMTAB)
	// DT_STRTAB moved, its size kept: into the symbol table, and over
	// the headers at the start of the file.
	for _, tt := range []struct {
		strtab uint64
		says   string
	}{{symtab + 24, ".dynsym at"}, {0x40, "the program header table"}} {
		b := bytes.Clone(orig)
		for i, e := range d.Entries {
			if e.Tag == elf.DT_STRTAB {
				binary.LittleEndian.PutUint64(b[d.Offset+int64(i)*16+8:], tt.strtab)
			}
		}
		p := writeTemp(t, "libfoo.so.1", b)
		err := editErr(p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: long})
		if err == nil || !strings.Contains(err.Error(), ": malformed file at offset 0x") || !strings.Contains(err.Error(), "overlap") || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("DT_STRTAB 0x%x: err = %v", tt.strtab, err)
		}
	}
}

// TestFileOnlySegmentAccepted: a segment that describes file bytes only
// (RISC-V's PT_RISCV_ATTRIBUTES: an address of 0, no size in memory) is
// not held to the rules of loaded ones.
func TestFileOnlySegmentAccepted(t *testing.T) {
	b, f := readFixture(t, "libfoo.so.1")
	i := slices.IndexFunc(f.Progs(), func(p elf.ProgHeader) bool { return p.Type == elf.PT_GNU_STACK })
	if i < 0 {
		t.Fatal("libfoo.so.1 has no PT_GNU_STACK")
	}
	at := binary.LittleEndian.Uint64(b[32:]) + uint64(i)*56
	binary.LittleEndian.PutUint32(b[at:], uint32(elf.PT_LOPROC+3))
	binary.LittleEndian.PutUint64(b[at+8:], 0x1000+0x40) // p_offset: bytes the first PT_LOAD does not load at address 0
	binary.LittleEndian.PutUint64(b[at+16:], 0)          // p_vaddr
	binary.LittleEndian.PutUint64(b[at+32:], 0x20)       // p_filesz
	binary.LittleEndian.PutUint64(b[at+40:], 0)          // p_memsz
	p := writeTemp(t, "libfoo.so.1", b)
	edit(t, p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: long})
}

// TestEmptyRelocationTableAccepted: GNU ld's -z pack-relative-relocs can
// leave DT_RELA 0 with DT_RELASZ 0 (glibc's static-pie ldconfig has
// them); no section lies at address 0, and none needs to.
func TestEmptyRelocationTableAccepted(t *testing.T) {
	b, f := readFixture(t, "libfoo.so.1")
	d, err := f.Dynamic()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, e := range d.Entries {
		if e.Tag == elf.DT_RELA || e.Tag == elf.DT_RELASZ {
			binary.LittleEndian.PutUint64(b[d.Offset+int64(i)*16+8:], 0)
			n++
		}
	}
	if n != 2 {
		t.Fatalf("libfoo.so.1 has %d of DT_RELA and DT_RELASZ", n)
	}
	p := writeTemp(t, "libfoo.so.1", b)
	edit(t, p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: long})
}

// TestEmptyStringTableRefused: with a string table of 0 bytes, a symbol
// name other than 0 lies outside it (the names read "" and once became the
// strings an edit appended). libraw.so: no version sections, one name
// entry (SONAME), turned into DT_DEBUG.
func TestEmptyStringTableRefused(t *testing.T) {
	b, f := readFixture(t, "libraw.so")
	d, err := f.Dynamic()
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	for i, e := range d.Entries {
		at := d.Offset + int64(i)*16
		switch e.Tag {
		case elf.DT_STRSZ:
			le.PutUint64(b[at+8:], 0)
		case elf.DT_SONAME:
			le.PutUint64(b[at:], uint64(elf.DT_DEBUG))
		}
	}
	dynstr, dynsym := f.ELF().Section(".dynstr"), f.ELF().Section(".dynsym")
	if dynstr == nil || dynsym == nil {
		t.Fatal("libraw.so has no .dynstr or .dynsym")
	}
	shoff := le.Uint64(b[40:])
	for i, s := range f.ELF().Sections {
		if s == dynstr {
			le.PutUint64(b[shoff+uint64(i)*64+32:], 0) // sh_size
		}
	}
	p := writeTemp(t, "libraw.so", b)
	err = editErr(p, patchelf.Edit{Kind: patchelf.KindSetSoname, Arg: "libraw.so"})
	want := fmt.Sprintf("%s: malformed file at offset 0x%x: .dynsym entry 1: name offset", p, dynsym.Offset+24)
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "(0x0 bytes)") {
		t.Errorf("err = %v, want %q...", err, want)
	}
}

// TestMalformedInputRefused32: the section header checks read an ELF32
// header's fields where ELF32 has them (they once read ELF64 offsets past
// its 52 bytes and panicked).
func TestMalformedInputRefused32(t *testing.T) {
	b, f := readFixture(t, "libi386.so")
	i := slices.IndexFunc(f.ELF().Sections, func(s *elf.Section) bool { return s.Name == ".dynsym" })
	if f.Class != elf.ELFCLASS32 || i < 0 {
		t.Fatalf("libi386.so: class %v, .dynsym %d", f.Class, i)
	}
	// ELF32: e_shoff at 32, 40-byte section headers, sh_flags at 8.
	at := uint64(binary.LittleEndian.Uint32(b[32:])) + uint64(i)*40
	binary.LittleEndian.PutUint32(b[at+8:], binary.LittleEndian.Uint32(b[at+8:])|uint32(elf.SHF_COMPRESSED))
	p := writeTemp(t, "libi386.so", b)
	err := editErr(p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: "/x"})
	want := fmt.Sprintf("%s: malformed file at offset 0x%x: section header %d (.dynsym): a loaded section marked compressed", p, at, i)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %v, want %q...", err, want)
	}
	// A PT_LOAD whose range wraps around the 32-bit address space
	// (ELF32 headers: 32 bytes, p_memsz at 20).
	b, _ = readFixture(t, "libi386.so")
	last := -1
	for j, ph := range f.Progs() {
		if ph.Type == elf.PT_LOAD {
			last = j
		}
	}
	phAt := uint64(binary.LittleEndian.Uint32(b[28:])) + uint64(last)*32
	binary.LittleEndian.PutUint32(b[phAt+20:], 0xffffffff)
	p = writeTemp(t, "libi386.so", b)
	err = editErr(p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: "/x"})
	want = fmt.Sprintf("%s: malformed file at offset 0x%x: program header %d: PT_LOAD at", p, phAt, last)
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "wrap around") {
		t.Errorf("err = %v, want %q...wrap around", err, want)
	}
}

// TestHugeSectionAlignment: a section that moves to make room for a
// program header keeps its alignment up to the new segment's: a crafted
// sh_addralign padded the segment to it (16 MB here; 2^40 exhausted
// memory).
func TestHugeSectionAlignment(t *testing.T) {
	b, f := readFixture(t, "libsysv.so")
	i := slices.IndexFunc(f.ELF().Sections, func(s *elf.Section) bool { return s.Name == ".hash" })
	if i < 0 {
		t.Fatal("libsysv.so has no .hash")
	}
	shoff := binary.LittleEndian.Uint64(b[40:])
	binary.LittleEndian.PutUint64(b[shoff+uint64(i)*64+48:], 1<<24)
	p := writeTemp(t, "libsysv.so", b)
	plan := edit(t, p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: long})
	if !slices.Contains(plan.Moved, ".hash") || plan.NewSize-plan.OldSize > 64<<10 {
		t.Errorf("moved %v, grew by %d bytes; want .hash moved and at most 64 KiB", plan.Moved, plan.NewSize-plan.OldSize)
	}
}

// TestTailMergedNameRealLoader: GNU ld stores a .dynstr name that ends
// another as that name's tail, here the SONAME libtm.so inside the symbol
// my.libtm.so. A new SONAME of the same length must not be written over
// the shared bytes (the plan once did, and Verify refused the edit:
// "dynamic symbol names changed"); the program that calls the symbol still
// runs under the real loader.
func TestTailMergedNameRealLoader(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "tm.c"), []byte("int f(void) __asm__(\"my.libtm.so\");\nint f(void) { return 5; }\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.c"), []byte("#include <stdio.h>\nint f(void) __asm__(\"my.libtm.so\");\nint main(void) { printf(\"%d\\n\", f()); return 0; }\n"), 0o644)
	lib, prog := filepath.Join(dir, "libtm.so"), filepath.Join(dir, "main")
	for _, args := range [][]string{
		{"-shared", "-fPIC", "-Wl,-soname,libtm.so", "-o", lib, filepath.Join(dir, "tm.c")},
		{"-o", prog, filepath.Join(dir, "main.c"), lib, "-Wl,-rpath,$ORIGIN"},
	} {
		if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	f, err := elfx.Open(lib)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := f.Dynamic()
	str, _ := d.StrTabBytes()
	f.Close()
	if bytes.Count(str, []byte("libtm.so\x00")) != 1 {
		t.Fatalf("oracle: ld did not merge libtm.so into my.libtm.so's tail: %q", str)
	}
	edit(t, lib, patchelf.Edit{Kind: patchelf.KindSetSoname, Arg: "libzz.so"})
	if st := read(t, lib); st.soname != "libzz.so" {
		t.Errorf("SONAME %q", st.soname)
	}
	out, err := exec.Command(prog).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "5" {
		t.Fatalf("program after the edit: %v\n%s", err, out)
	}
}

// TestDebugFileRefused: a separate debug-info file (objcopy
// --only-keep-debug) has the binary's headers but empty loaded sections;
// an edit is refused with what the file is, and it is left as it was.
func TestDebugFileRefused(t *testing.T) {
	objcopy := testenv.Tool(t, "objcopy", "binutils")
	p := filepath.Join(t.TempDir(), "libfoo.so.1.debug")
	if out, err := exec.Command(objcopy, "--only-keep-debug", testenv.Testdata("libfoo.so.1"), p).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
	orig, _ := os.ReadFile(p)
	err := editErr(p, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: "/x"})
	if err == nil || !strings.HasPrefix(err.Error(), p+": a separate debug-info file") {
		t.Errorf("err = %v", err)
	}
	if now, _ := os.ReadFile(p); !bytes.Equal(now, orig) {
		t.Error("the file changed")
	}
}

// TestNoStringTable: a dynamic section without DT_STRTAB (no linker
// writes one) has no table the loader could read names from: an edit that
// leaves a name entry is refused as malformed, where the plan once wrote
// the entry (and grew a table nothing pointed at).
func TestNoStringTable(t *testing.T) {
	b, f := readFixture(t, "libfoo.so.1")
	d, err := f.Dynamic()
	if err != nil {
		t.Fatal(err)
	}
	// Every string entry and DT_STRTAB itself become DT_DEBUG.
	for i := 0; i < len(d.Entries); i++ {
		at := d.Offset + int64(i)*16
		switch elf.DynTag(binary.LittleEndian.Uint64(b[at:])) {
		case elf.DT_STRTAB, elf.DT_NEEDED, elf.DT_SONAME, elf.DT_RPATH, elf.DT_RUNPATH:
			binary.LittleEndian.PutUint64(b[at:], uint64(elf.DT_DEBUG))
		}
	}
	p := writeTemp(t, "libfoo.so.1", b)
	// Nothing to add: still edited.
	edit(t, p, patchelf.Edit{Kind: patchelf.KindClearExecStack})
	b, _ = os.ReadFile(p)
	// A name already in .dynstr, and a new one that grows it.
	for _, e := range []patchelf.Edit{{Kind: patchelf.KindSetSoname, Arg: "libfoo.so.1"}, {Kind: patchelf.KindAddNeeded, Arg: "libamdhip64.so.6"}} {
		err := editErr(p, e)
		want := fmt.Sprintf("%s: malformed file at offset 0x%x: dynamic section: no DT_STRTAB entry", p, d.Offset)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%v: err = %v, want %q...", e, err, want)
		}
		if now, _ := os.ReadFile(p); !bytes.Equal(now, b) {
			t.Errorf("%v: the file changed", e)
		}
	}
}

// TestReadOnlyDynamicRealLoader: lld's -z rodynamic puts .dynamic in a
// read-only segment (glibc 2.35 and later load such files). Edits that
// keep .dynamic where it is and edits that move it both verify, and the
// real loader still runs the program. Verify once insisted on a writable
// .dynamic and refused every edit of these files.
func TestReadOnlyDynamicRealLoader(t *testing.T) {
	clang := testenv.Tool(t, "clang-15", "clang-15")
	lld := testenv.Tool(t, "ld.lld-15", "lld-15")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "foo.c"), []byte("int foo(void) { return 42; }\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.c"), []byte("#include <stdio.h>\nint foo(void);\nint main(void) { printf(\"%d\\n\", foo()); return 0; }\n"), 0o644)
	lib, prog := filepath.Join(dir, "libfoo.so.1"), filepath.Join(dir, "main")
	for _, args := range [][]string{
		{"-shared", "-fPIC", "-Wl,-soname,libfoo.so.1", "-Wl,-rpath,/build/tmp/lib", "-o", lib, filepath.Join(dir, "foo.c")},
		{"-o", prog, filepath.Join(dir, "main.c"), lib, "-Wl,-rpath,/nowhere"},
	} {
		args = append([]string{"--ld-path=" + lld, "-Wl,-z,rodynamic"}, args...)
		if out, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
			t.Fatalf("clang %v: %v\n%s", args, err, out)
		}
	}
	for _, p := range []string{lib, prog} {
		f, err := elfx.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, ph := range f.Progs() {
			if ph.Type == elf.PT_DYNAMIC && ph.Flags&elf.PF_W != 0 {
				t.Fatalf("%s: lld wrote a writable PT_DYNAMIC (%v) for -z rodynamic", p, ph.Flags)
			}
		}
		f.Close()
	}
	edit(t, lib, patchelf.Edit{Kind: patchelf.KindRemoveRPath})
	edit(t, lib, patchelf.Edit{Kind: patchelf.KindSetSoname, Arg: "libfoo.so.1"})
	edit(t, prog, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: "$ORIGIN:" + long})
	// lld leaves no spare dynamic entries: a new one moves .dynamic.
	if p := edit(t, prog, patchelf.Edit{Kind: patchelf.KindAddNeeded, Arg: "libm.so.6"}); !slices.Contains(p.Moved, ".dynamic") {
		t.Errorf("adding a NEEDED entry moved %v, not .dynamic", p.Moved)
	}
	if st := read(t, lib); st.hasRPath || st.hasRun {
		t.Errorf("libfoo.so.1 still has a search path: %+v", st)
	}
	out, err := exec.Command(prog).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "42" {
		t.Fatalf("patched program: %v\n%s", err, out)
	}
}

// readFixture reads testdata/name and parses it.
func readFixture(t *testing.T, name string) ([]byte, *elfx.File) {
	t.Helper()
	b, err := os.ReadFile(testenv.Testdata(name))
	if err != nil {
		t.Fatal(err)
	}
	f, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), name)
	if err != nil {
		t.Fatal(err)
	}
	return b, f
}

// editErr edits p and returns the error.
func editErr(p string, edits ...patchelf.Edit) error {
	_, err := patchelf.EditFile(p, edits, patchelf.Options{}, patchelf.WriteOptions{})
	return err
}

// writeTemp writes b as name in a new temporary directory.
func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// onlyFile fails unless p is the only entry of its directory: no temporary
// copy was left behind.
func onlyFile(t *testing.T, p string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(p))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != filepath.Base(p) {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("directory of %s holds %v, want only the file", filepath.Base(p), names)
	}
}

func TestInPlaceKeepsInodeAndDryRunWritesNothing(t *testing.T) {
	p := copyFixture(t, "libfoo.so.1")
	link := p + ".hardlink"
	if err := os.Link(p, link); err != nil {
		testenv.Missing(t, "hard links in the temporary directory ("+err.Error()+")", "")
	}
	orig, _ := os.ReadFile(p)
	if _, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: long}}, patchelf.Options{}, patchelf.WriteOptions{DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.ReadFile(p); !bytes.Equal(orig, now) {
		t.Fatalf("dry run wrote")
	}
	if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 2 {
		t.Errorf("dry run left %d entries beside the file and its hard link", len(ents)-2)
	}
	if _, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: long}}, patchelf.Options{}, patchelf.WriteOptions{InPlace: true}); err != nil {
		t.Fatal(err)
	}
	if s := read(t, link); s.rpath != long {
		t.Errorf("--in-place did not write through the hard link: %q", s.rpath)
	}
	// The default path keeps a file with several names in place too, as
	// patchelf does: the edit is seen through every name.
	q := copyFixture(t, "libfoo.so.1")
	os.Link(q, q+".hl")
	edit(t, q, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: long})
	if s := read(t, q+".hl"); s.rpath != long {
		t.Errorf("the default write path broke the hard link: the other name has %q", s.rpath)
	}
	if st, _ := os.Stat(q); st.Mode().Perm() != 0o755 {
		t.Errorf("mode not kept: %v", st.Mode())
	}
}

func TestPageSize(t *testing.T) {
	p := copyFixture(t, "libfoo.so.1")
	plan, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: long}}, patchelf.Options{PageSize: 65536}, patchelf.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if plan.AppendOffset%65536 != 0 {
		t.Errorf("new segment at 0x%x, not 64 KiB aligned", plan.AppendOffset)
	}
}

// TestRealLoaderAndStrip builds a PIE and a non-PIE executable and a
// shared library with gcc, applies each growing edit, and checks the
// executables still run and the library still loads (dlopen harness),
// before and after strip, with readelf reporting no warnings.
// runner runs a program in dir and fails the test when it fails.
func runner(t *testing.T, dir string) func(name string, args ...string) string {
	return func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
}

func TestRealLoaderAndStrip(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	strip := testenv.Tool(t, "strip", "binutils")
	readelf := testenv.Tool(t, "readelf", "binutils")
	dir := t.TempDir()
	w := func(n, s string) { os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644) }
	w("lib.c", "int lib_value(void){return 42;}\n")
	w("main.c", "#include <stdio.h>\nextern int lib_value(void);\nint main(void){printf(\"%d\\n\", lib_value());return 0;}\n")
	w("dl.c", "#include <dlfcn.h>\n#include <stdio.h>\nint main(int c,char**v){void*h=dlopen(v[1],RTLD_NOW);if(!h){fprintf(stderr,\"%s\\n\",dlerror());return 1;}int(*f)(void)=dlsym(h,v[2]);if(!f){fprintf(stderr,\"no %s\\n\",v[2]);return 1;}printf(\"%d\\n\",f());return 0;}\n")
	run := runner(t, dir)
	run(gcc, "-shared", "-fPIC", "-o", "libv.so", "lib.c", "-Wl,-soname,libv.so")
	run(gcc, "-o", "pie", "main.c", "-L.", "-lv", "-pie", "-fPIE")
	run(gcc, "-o", "nopie", "main.c", "-L.", "-lv", "-no-pie")
	run(gcc, "-o", "dl", "dl.c", "-ldl")
	cases := [][]patchelf.Edit{
		{{Kind: patchelf.KindSetRPath, Arg: dir + ":" + long}},
		{{Kind: patchelf.KindSetRPath, Arg: dir}, {Kind: patchelf.KindAddNeeded, Arg: "libm.so.6"}, {Kind: patchelf.KindAddDebugTag}},
		{{Kind: patchelf.KindSetRPath, Arg: "$ORIGIN"}, {Kind: patchelf.KindSetInterpreter, Arg: "/lib64/../lib64/../lib64/ld-linux-x86-64.so.2"}},
	}
	for ci, edits := range cases {
		for _, exe := range []string{"pie", "nopie"} {
			p := filepath.Join(dir, exe+"-edited")
			b, err := os.ReadFile(filepath.Join(dir, exe))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o755); err != nil {
				t.Fatal(err)
			}
			if _, err := patchelf.EditFile(p, edits, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
				t.Fatalf("case %d %s: %v", ci, exe, err)
			}
			if out := run(p); strings.TrimSpace(out) != "42" {
				t.Errorf("case %d %s prints %q", ci, exe, out)
			}
			if warn := run(readelf, "-a", "-W", p); strings.Contains(warn, "Warning") {
				t.Errorf("case %d %s: readelf warns", ci, exe)
			}
			// A second growing edit extends the table where the first put
			// it; the program still runs.
			plan, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: dir + ":" + long + ":/grown/again/in/place"}}, patchelf.Options{}, patchelf.WriteOptions{})
			if err != nil {
				t.Fatalf("case %d %s, second edit: %v", ci, exe, err)
			}
			if ci == 0 && plan.Extended != ".dynstr" {
				t.Errorf("case %d %s: second growing edit added a segment: %+v", ci, exe, plan)
			}
			if out := run(p); strings.TrimSpace(out) != "42" {
				t.Errorf("case %d %s after a second edit prints %q", ci, exe, out)
			}
			if warn := run(readelf, "-a", "-W", p); strings.Contains(warn, "Warning") {
				t.Errorf("case %d %s: readelf warns after a second edit", ci, exe)
			}
			run(strip, p)
			if out := run(p); strings.TrimSpace(out) != "42" {
				t.Errorf("case %d %s after strip prints %q", ci, exe, out)
			}
		}
		lib := filepath.Join(dir, "libv-edited.so")
		b, _ := os.ReadFile(filepath.Join(dir, "libv.so"))
		os.WriteFile(lib, b, 0o755)
		libEdits := append([]patchelf.Edit{{Kind: patchelf.KindSetSoname, Arg: "libv-with-a-much-longer-soname.so.1"}}, edits[0])
		if _, err := patchelf.EditFile(lib, libEdits, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if out := run(filepath.Join(dir, "dl"), lib, "lib_value"); strings.TrimSpace(out) != "42" {
			t.Errorf("case %d: dlopen of the edited library prints %q", ci, out)
		}
		run(strip, lib)
		if out := run(filepath.Join(dir, "dl"), lib, "lib_value"); strings.TrimSpace(out) != "42" {
			t.Errorf("case %d: dlopen after strip prints %q", ci, out)
		}
	}
}

// FuzzEditSequences applies random edit sequences to the fixtures: each
// either fails cleanly or yields a plan whose verified result re-parses.
func FuzzEditSequences(f *testing.F) {
	f.Add(uint8(0), []byte{0, 1, 2, 3}, "abc")
	f.Add(uint8(1), []byte{4, 5, 6, 0, 0}, "/opt/rocm/lib")
	// The fixtures, and the same stripped of their section headers
	// (edited through what the loader sees).
	fixtures := []string{"libfoo.so.1", "hello", "libi386.so", "libbe.so", "libsysv.so",
		"-libfoo.so.1", "-hello", "-libi386.so", "-libbe.so", "-libsysv.so"}
	kinds := []patchelf.Kind{patchelf.KindSetRPath, patchelf.KindAddRPath, patchelf.KindRemoveRPath, patchelf.KindAddNeeded, patchelf.KindRemoveNeeded,
		patchelf.KindReplaceNeeded, patchelf.KindSetSoname, patchelf.KindSetInterpreter, patchelf.KindNoDefaultLib, patchelf.KindAddDebugTag,
		patchelf.KindClearExecStack, patchelf.KindSetExecStack, patchelf.KindSetOSABI, patchelf.KindRenameDynamicSymbols, patchelf.KindClearSymbolVersion}
	f.Fuzz(func(t *testing.T, which uint8, ops []byte, arg string) {
		if len(ops) > 16 || len(arg) > 300 {
			return
		}
		name := fixtures[int(which)%len(fixtures)]
		b, err := os.ReadFile(testenv.Testdata(strings.TrimPrefix(name, "-")))
		if err != nil {
			t.Fatal(err)
		}
		if name[0] == '-' {
			testenv.StripSectionHeaders(b)
		}
		file, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), "fuzz")
		if err != nil {
			t.Fatal(err)
		}
		syms, _ := file.DynamicSymbols()
		var edits []patchelf.Edit
		for i, o := range ops {
			a := arg
			if i%2 == 1 {
				a = strings.Repeat(arg, 2)
			}
			e := patchelf.Edit{Kind: kinds[int(o)%len(kinds)], Arg: a, Arg2: a + "x"}
			if len(syms) > 0 && (e.Kind == patchelf.KindRenameDynamicSymbols || e.Kind == patchelf.KindClearSymbolVersion) {
				name := syms[int(o)%len(syms)].Name
				e.Arg, e.Renames = name, map[string]string{name: a, a: name}
			}
			edits = append(edits, e)
		}
		plan, err := patchelf.PlanFile(file, edits, patchelf.Options{})
		if err != nil {
			return
		}
		if err := plan.Verify(file); err != nil {
			if strings.Contains(err.Error(), "\x00") || strings.ContainsAny(arg, "\x00") {
				return // a NUL in a name cannot survive a string table
			}
			t.Fatalf("%v: %v", edits, err)
		}
		// A second, growing edit of the result: it meets the layouts the
		// first one leaves (a .dynstr at the end of the file, grown in
		// place, new segments after new segments).
		out := make([]byte, plan.NewSize)
		copy(out, b)
		if err := plan.Apply(sliceWriter(out)); err != nil {
			t.Fatalf("%v: apply: %v", edits, err)
		}
		after, err := elfx.NewFileSize(bytes.NewReader(out), int64(len(out)), "fuzz (after)")
		if err != nil {
			t.Fatalf("%v: the result does not parse: %v", edits, err)
		}
		second := []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: strings.Repeat(arg+":", 3) + "/second/edit"}, {Kind: patchelf.KindAddNeeded, Arg: "lib" + arg + ".so.2"}}
		plan2, err := patchelf.PlanFile(after, second, patchelf.Options{})
		if err != nil {
			return
		}
		if err := plan2.Verify(after); err != nil && !strings.ContainsAny(arg, "\x00") {
			t.Fatalf("%v then %v: %v", edits, second, err)
		}
	})
}

// FuzzPlanInput edits fuzzed files: the fixtures mutated, then one of a
// few edit lists (growing and shrinking the dynamic string table, adding
// entries, moving the interpreter, renaming a symbol). Planning must refuse
// what it cannot edit without panicking or exhausting memory, and a plan
// that verifies must apply and write a file that parses again.
//
// A plan that fails verification is refused (the file is left alone), so
// by default that passes. With ROCMDOCTOR_FUZZ_STRICT=1 it fails: the
// input should have been refused as malformed when it was read, naming
// what is wrong, rather than by verification, which blames the edit. The
// strict run found the input checks of PlanFile (TestMalformedInputRefused
// and the tests beside it); it still finds rarer crafted inputs that only
// verification refuses.
func FuzzPlanInput(f *testing.F) {
	strict := os.Getenv("ROCMDOCTOR_FUZZ_STRICT") != ""
	for _, name := range []string{"libfoo.so.1", "hello", "libi386.so", "libbe.so", "libsysv.so"} {
		b, err := os.ReadFile(testenv.Testdata(name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(0))
		s := bytes.Clone(b)
		testenv.StripSectionHeaders(s)
		f.Add(s, uint8(1))
	}
	lists := [][]patchelf.Edit{
		{{Kind: patchelf.KindSetRPath, Arg: "$ORIGIN/../lib:/opt/rocm-6.2.0/lib:/opt/rocm-6.2.0/lib/llvm/lib"}, {Kind: patchelf.KindAddNeeded, Arg: "libamdhip64.so.6"}},
		{{Kind: patchelf.KindRemoveRPath}, {Kind: patchelf.KindSetSoname, Arg: "libx.so.9"}, {Kind: patchelf.KindClearExecStack}},
		{{Kind: patchelf.KindSetInterpreter, Arg: "/nix/store/00000000000000000000000000000000-glibc-2.40/lib/ld-linux-x86-64.so.2"}, {Kind: patchelf.KindReplaceNeeded, Arg: "libc.so.6", Arg2: "libc.so.7"}},
		{{Kind: patchelf.KindRemoveNeeded, Arg: "libfoo.so.1"}, {Kind: patchelf.KindAddRPath, Arg: "/a"}, {Kind: patchelf.KindNoDefaultLib}, {Kind: patchelf.KindAddDebugTag}},
		{{Kind: patchelf.KindRenameDynamicSymbols, Renames: map[string]string{"foo_api": "foo_api_renamed_with_a_longer_name", "puts": "p"}}, {Kind: patchelf.KindClearSymbolVersion, Arg: "foo_api"}},
	}
	f.Fuzz(func(t *testing.T, b []byte, which uint8) {
		file, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), "fuzz")
		if err != nil {
			return
		}
		edits := lists[int(which)%len(lists)]
		plan, err := patchelf.PlanFile(file, edits, patchelf.Options{})
		if err != nil {
			return
		}
		if err := plan.Verify(file); err != nil {
			if !strict || !strings.HasPrefix(err.Error(), "verification") {
				return // refused; or the input's own fault, met while reading it for comparison
			}
			t.Fatalf("%v: %v", edits, err)
		}
		out := make([]byte, plan.NewSize)
		copy(out, b)
		if err := plan.Apply(sliceWriter(out)); err != nil {
			t.Fatalf("%v: apply: %v", edits, err)
		}
		if _, err := elfx.NewFileSize(bytes.NewReader(out), int64(len(out)), "fuzz (after)"); err != nil {
			t.Fatalf("%v: the result does not parse: %v", edits, err)
		}
	})
}

// sliceWriter writes into a byte slice that already has the final size.
type sliceWriter []byte

func (w sliceWriter) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > int64(len(w)) {
		return 0, fmt.Errorf("write of %d bytes at %d outside %d", len(p), off, len(w))
	}
	return copy(w[off:], p), nil
}

// TestRenameDynamicSymbolsRealLoader renames every seventh of 300 exported
// functions in a library and in the programs that call them, then runs the
// programs and dlsym()s the new names through the real loader: the GNU and
// SysV hash tables, the reordered .dynsym, .gnu.version and the relocations
// must all agree, before and after strip.
func TestRenameDynamicSymbolsRealLoader(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	strip := testenv.Tool(t, "strip", "binutils")
	readelf := testenv.Tool(t, "readelf", "binutils")
	dir := t.TempDir()
	w := func(n, s string) { os.WriteFile(filepath.Join(dir, n), []byte(s), 0o644) }
	var lib, decl, calls strings.Builder
	renames := map[string]string{}
	sum := 0
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&lib, "int fn_%d(void){return %d;}\n", i, i)
		fmt.Fprintf(&decl, "extern int fn_%d(void);\n", i)
		if i%3 == 0 {
			fmt.Fprintf(&calls, "s += fn_%d();\n", i)
			sum += i
		}
		if i%7 == 0 {
			renames[fmt.Sprintf("fn_%d", i)] = fmt.Sprintf("rocm_renamed_fn_%d", i)
		}
	}
	lib.WriteString("int lib_data = 5;\nint call_inside(void){return fn_21()+fn_22();}\n")
	renames["lib_data"] = "rocm_lib_data"
	w("lib.c", lib.String())
	w("main.c", "#include <stdio.h>\n"+decl.String()+"extern int lib_data; extern int call_inside(void);\nint main(void){int s=0;\n"+calls.String()+
		"printf(\"%d %d %d\\n\", s, lib_data, call_inside());return 0;}\n")
	w("dl.c", "#include <dlfcn.h>\n#include <stdio.h>\nint main(int c,char**v){void*h=dlopen(v[1],RTLD_NOW);if(!h){fprintf(stderr,\"%s\\n\",dlerror());return 1;}"+
		"for(int i=2;i<c;i++){int(*f)(void)=dlsym(h,v[i]);if(!f){printf(\"missing %s\\n\",v[i]);continue;}printf(\"%d\\n\",f());}return 0;}\n")
	run := runner(t, dir)
	run(gcc, "-shared", "-fPIC", "-o", "libr.so", "lib.c", "-Wl,-soname,libr.so", "-Wl,--hash-style=both")
	run(gcc, "-o", "pie", "main.c", "-L.", "-lr", "-pie", "-fPIE", "-Wl,-rpath,"+dir)
	run(gcc, "-o", "nopie", "main.c", "-L.", "-lr", "-no-pie", "-Wl,-rpath,"+dir)
	run(gcc, "-o", "dl", "dl.c", "-ldl")
	want := fmt.Sprintf("%d 5 43", sum)
	if out := strings.TrimSpace(run(filepath.Join(dir, "pie"))); out != want {
		t.Fatalf("before: %q, want %q", out, want)
	}
	order := func(p string) []string {
		f, err := elfx.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		syms, _ := f.DynamicSymbols()
		var names []string
		for _, s := range syms {
			names = append(names, s.Name)
		}
		return names
	}
	libPath := filepath.Join(dir, "libr.so")
	before := order(libPath)
	ren := patchelf.Edit{Kind: patchelf.KindRenameDynamicSymbols, Renames: renames}
	edit(t, libPath, ren, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: "$ORIGIN"})
	after := order(libPath)
	moved := 0
	for i := range before {
		if _, renamed := renames[before[i]]; !renamed && before[i] != after[i] {
			moved++
		}
	}
	if moved == 0 {
		t.Errorf("no symbol changed place: the GNU hash reordering is not exercised")
	}
	for _, exe := range []string{"pie", "nopie"} {
		edit(t, filepath.Join(dir, exe), ren)
		if out := strings.TrimSpace(run(filepath.Join(dir, exe))); out != want {
			t.Errorf("%s after rename: %q, want %q", exe, out, want)
		}
	}
	check := func(stage string) {
		t.Helper()
		out := run(filepath.Join(dir, "dl"), libPath, "rocm_renamed_fn_14", "fn_14", "fn_15", "rocm_renamed_fn_294", "call_inside")
		if got := strings.Fields(out); strings.Join(got, " ") != "14 missing fn_14 15 294 43" {
			t.Errorf("%s: dlsym results %q", stage, out)
		}
		if warn := run(readelf, "-a", "-W", libPath); strings.Contains(warn, "Warning") {
			t.Errorf("%s: readelf warns", stage)
		}
	}
	check("after rename")
	run(strip, libPath)
	check("after strip")
	if out := strings.TrimSpace(run(filepath.Join(dir, "pie"))); out != want {
		t.Errorf("pie with the stripped library: %q", out)
	}
	// A map that matches nothing is a no-op, as with patchelf (upstream's
	// rename-dynamic-symbols test applies one map to every library), and
	// the other edits of the call still apply.
	b0, _ := os.ReadFile(libPath)
	p, err := patchelf.EditFile(libPath, []patchelf.Edit{{Kind: patchelf.KindRenameDynamicSymbols, Renames: map[string]string{"no_such": "x"}}}, patchelf.Options{}, patchelf.WriteOptions{})
	if err != nil || p.Changed {
		t.Errorf("renaming an absent symbol: changed %v, %v", p != nil && p.Changed, err)
	}
	if b1, _ := os.ReadFile(libPath); !bytes.Equal(b0, b1) {
		t.Errorf("a rename that matches nothing changed the file")
	}
	if _, err := patchelf.EditFile(libPath, []patchelf.Edit{{Kind: patchelf.KindRenameDynamicSymbols, Renames: map[string]string{"no_such": "x"}}, {Kind: patchelf.KindSetSoname, Arg: "libkept.so"}}, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if s := read(t, libPath); s.soname != "libkept.so" {
		t.Errorf("the other edit was not applied: soname %q", s.soname)
	}
}

// Renaming on the 32-bit, big-endian and SysV-hash-only fixtures: the new
// name is found through the file's own hash table and the old one is gone.
func TestRenameOnEveryFixture(t *testing.T) {
	for _, name := range []string{"libfoo.so.1", "libi386.so", "libbe.so", "libsysv.so"} {
		p := copyFixture(t, name)
		f, err := elfx.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		syms, _ := f.DynamicSymbols()
		f.Close()
		var target string
		for _, s := range syms {
			if s.Section != elf.SHN_UNDEF && s.Name != "" && s.Bind == elf.STB_GLOBAL {
				target = s.Name
				break
			}
		}
		if target == "" {
			t.Fatalf("%s: no defined global symbol", name)
		}
		edit(t, p, patchelf.Edit{Kind: patchelf.KindRenameDynamicSymbols, Renames: map[string]string{target: "renamed_" + target + "_longer"}})
		f, err = elfx.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		tab, err := f.DynamicSymbolTable()
		if err != nil {
			t.Fatal(err)
		}
		if len(tab.Lookup("renamed_"+target+"_longer")) == 0 || len(tab.Lookup(target)) != 0 {
			t.Errorf("%s: rename of %s not visible through the hash table", name, target)
		}
		f.Close()
	}
}

func TestParseRenameMap(t *testing.T) {
	m, err := patchelf.ParseRenameMap("a b\n\n  c   d  \n")
	if err != nil || len(m) != 2 || m["a"] != "b" || m["c"] != "d" {
		t.Errorf("got %v, %v", m, err)
	}
	for _, bad := range []string{"", "a\n", "a b c\n", "a b\na c\n"} {
		if _, err := patchelf.ParseRenameMap(bad); err == nil {
			t.Errorf("ParseRenameMap(%q) succeeded", bad)
		}
	}
}

// A static-pie executable never runs the dynamic loader: dynamic edits are
// refused with the reason, the file is untouched, and header-only edits
// still work (the program runs afterwards).
func TestStaticPIERejectedClearly(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	src, exe := filepath.Join(dir, "sp.c"), filepath.Join(dir, "sp")
	os.WriteFile(src, []byte("int main(void){return 3;}\n"), 0o644)
	if out, err := exec.Command(gcc, "-static-pie", "-o", exe, src).CombinedOutput(); err != nil {
		testenv.Missing(t, "gcc -static-pie ("+strings.TrimSpace(string(out))+")", "libc6-dev")
	}
	b0, _ := os.ReadFile(exe)
	for _, e := range []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: "/opt/rocm/lib"}, {Kind: patchelf.KindAddNeeded, Arg: "libm.so.6"}, {Kind: patchelf.KindAddDebugTag}} {
		_, err := patchelf.EditFile(exe, []patchelf.Edit{e}, patchelf.Options{}, patchelf.WriteOptions{})
		if err == nil || !strings.Contains(err.Error(), "static-pie") {
			t.Errorf("%s on a static-pie: %v", e.Kind, err)
		}
	}
	if b1, _ := os.ReadFile(exe); !bytes.Equal(b0, b1) {
		t.Fatalf("refused edits changed the file")
	}
	edit(t, exe, patchelf.Edit{Kind: patchelf.KindClearExecStack})
	var ee *exec.ExitError
	if err := exec.Command(exe).Run(); !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("static-pie after --clear-execstack: %v", err)
	}
}

// Verification must notice a result whose symbol names differ: the plan's
// new segment (holding the moved .dynstr) is tampered with before Verify.
func TestVerifyCatchesChangedSymbolName(t *testing.T) {
	_, f := readFixture(t, "libfoo.so.1")
	syms, _ := f.DynamicSymbols()
	var name string
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && len(s.Name) > 3 {
			name = s.Name
		}
	}
	p, err := patchelf.PlanFile(f, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: strings.Repeat("/opt/rocm/lib:", 40)}}, patchelf.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Verify(f); err != nil {
		t.Fatalf("untampered plan: %v", err)
	}
	i := bytes.Index(p.AppendTail, []byte("\x00"+name+"\x00"))
	if name == "" || i < 0 {
		t.Fatalf("symbol %q not in the new segment's .dynstr", name)
	}
	p.AppendTail[i+1] ^= 0x20
	if err := p.Verify(f); err == nil || !strings.Contains(err.Error(), "symbol names") {
		t.Errorf("tampered symbol name %q: Verify = %v", name, err)
	}
}

// SameWrites, Writes, Overlay and SizeAfter describe a plan's writes
// without a file: wheel relink compares a predicted edit with the real one
// and hashes a library through it while inflating it.
func TestPlanWrites(t *testing.T) {
	p := &patchelf.Plan{
		Patches:      []patchelf.Patch{{Offset: 100, Data: []byte("abc")}, {Offset: 10, Data: []byte("xy")}},
		AppendOffset: 4096, Append: []byte("HEAD"), AppendTail: []byte("tail"), AppendSize: 8,
	}
	q := &patchelf.Plan{
		Patches:      []patchelf.Patch{{Offset: 10, Data: []byte("xy")}, {Offset: 100, Data: []byte("abc")}},
		AppendOffset: 4096, Append: []byte("HEAD"), AppendTail: []byte("tail"), AppendSize: 8,
	}
	if !p.SameWrites(q) || !q.SameWrites(p) {
		t.Error("the same writes in another order differ")
	}
	for name, change := range map[string]func(*patchelf.Plan){
		"patch byte":     func(x *patchelf.Plan) { x.Patches[1].Data = []byte("abd") },
		"patch offset":   func(x *patchelf.Plan) { x.Patches[0].Offset = 11 },
		"one patch more": func(x *patchelf.Plan) { x.Patches = append(x.Patches, patchelf.Patch{Offset: 1, Data: []byte{0}}) },
		"append":         func(x *patchelf.Plan) { x.Append = []byte("HEAd") },
		"append tail":    func(x *patchelf.Plan) { x.AppendTail = []byte("tai") },
		"append offset":  func(x *patchelf.Plan) { x.AppendOffset = 8192 },
		"append size":    func(x *patchelf.Plan) { x.AppendSize = 9 },
	} {
		r := *q
		r.Patches = append([]patchelf.Patch(nil), q.Patches...)
		change(&r)
		if p.SameWrites(&r) {
			t.Errorf("%s: plans that write differently are the same", name)
		}
	}
	for _, c := range []struct {
		from, to int64
		want     bool
	}{{0, 10, false}, {0, 11, true}, {11, 12, true}, {12, 100, false}, {102, 103, true}, {103, 4096, false}, {4103, 5000, true}, {4104, 5000, false}} {
		if got := p.Writes(c.from, c.to); got != c.want {
			t.Errorf("Writes(%d, %d) = %v", c.from, c.to, got)
		}
	}
	b := bytes.Repeat([]byte{'.'}, 20)
	p.Overlay(b, 95) // bytes 95..114
	if string(b) != ".....abc............" {
		t.Errorf("Overlay at 95: %q", b)
	}
	b = bytes.Repeat([]byte{'.'}, 10)
	p.Overlay(b, 4094)
	if string(b) != "..HEADtail" {
		t.Errorf("Overlay at 4094: %q", b)
	}
	if got := p.SizeAfter(1000); got != 4104 {
		t.Errorf("SizeAfter(1000) = %d, want 4104", got)
	}
	if got := (&patchelf.Plan{}).SizeAfter(1000); got != 1000 {
		t.Errorf("SizeAfter without an appended segment = %d", got)
	}
}

// What patchelf accepts: an all-zero PT_INTERP takes a new interpreter
// (moved, the old bytes left) and the program runs; --set-interpreter ""
// changes nothing; PT_INTERP with p_filesz > p_memsz, or over the notes
// that follow .interp (linker scripts that make them contiguous), takes a
// new interpreter without writing over the notes.
func TestInterpreterCasesPatchelfAccepts(t *testing.T) {
	orig, err := os.ReadFile(testenv.Testdata("hello"))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := elfx.Open(testenv.Testdata("hello"))
	var ip elf.ProgHeader
	at := -1
	for i, ph := range f.Progs() {
		if ph.Type == elf.PT_INTERP {
			ip, at = ph, int(binary.LittleEndian.Uint64(orig[32:]))+i*56 // e_phoff; ELF64 headers
		}
	}
	f.Close()
	if at < 0 {
		t.Fatal("hello has no PT_INTERP")
	}
	loader := "/lib64/ld-linux-x86-64.so.2"
	runs := func(t *testing.T, p string) {
		t.Helper()
		if _, err := os.Stat(loader); err != nil {
			testenv.Missing(t, "the x86-64 loader", "libc6")
		}
		cmd := exec.Command(p)
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Dir(testenv.Testdata("libfoo.so.1")))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("the edited program does not run: %v %s", err, out)
		}
	}
	notes := func(t *testing.T, b []byte) map[string][]byte {
		t.Helper()
		ef, err := elf.NewFile(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		m := map[string][]byte{}
		for _, s := range ef.Sections {
			if s.Type == elf.SHT_NOTE {
				m[s.Name], _ = s.Data()
			}
		}
		return m
	}
	t.Run("all-zero name", func(t *testing.T) {
		b := bytes.Clone(orig)
		clear(b[ip.Off : ip.Off+ip.Filesz])
		p := writeTemp(t, "hello", b)
		if _, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.KindSetInterpreter, Arg: loader}}, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if s := read(t, p); s.interp != loader {
			t.Errorf("interpreter %q", s.interp)
		}
		runs(t, p)
	})
	t.Run("empty PT_LOAD", func(t *testing.T) {
		// A PT_NOTE made an empty PT_LOAD at offset 0x20c and address 0:
		// neither congruent nor in order, and mapped by no one.
		b := bytes.Clone(orig)
		phoff := int(binary.LittleEndian.Uint64(orig[32:]))
		n := int(binary.LittleEndian.Uint16(orig[56:]))
		done := false
		for i := range n {
			ph := b[phoff+i*56:]
			if elf.ProgType(binary.LittleEndian.Uint32(ph)) == elf.PT_NOTE && !done {
				binary.LittleEndian.PutUint32(ph, uint32(elf.PT_LOAD))
				binary.LittleEndian.PutUint64(ph[8:], 0x20c) // p_offset
				binary.LittleEndian.PutUint64(ph[16:], 0)    // p_vaddr
				binary.LittleEndian.PutUint64(ph[24:], 0)    // p_paddr
				binary.LittleEndian.PutUint64(ph[32:], 0)    // p_filesz
				binary.LittleEndian.PutUint64(ph[40:], 0)    // p_memsz
				binary.LittleEndian.PutUint64(ph[48:], 0x1000)
				done = true
			}
		}
		if !done {
			t.Fatal("hello has no PT_NOTE")
		}
		p := writeTemp(t, "hello", b)
		runs(t, p) // (the kernel maps nothing for it)
		if _, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: long}}, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if s := read(t, p); s.rpath != long {
			t.Errorf("rpath %q", s.rpath)
		}
		runs(t, p)
	})
	t.Run("empty argument", func(t *testing.T) {
		p := writeTemp(t, "hello", orig)
		pl, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.KindSetInterpreter, Arg: ""}}, patchelf.Options{}, patchelf.WriteOptions{})
		if err != nil || pl.Changed {
			t.Errorf("changed %v, %v", pl != nil && pl.Changed, err)
		}
	})
	t.Run("filesz over memsz and over the notes", func(t *testing.T) {
		b := bytes.Clone(orig)
		// PT_INTERP grown over what follows .interp (the notes), its
		// memory size left: the name is still the first string.
		binary.LittleEndian.PutUint64(b[at+32:], ip.Filesz+0x40)
		p := writeTemp(t, "hello", b)
		longer := "/lib64/../lib64/ld-linux-x86-64.so.2"
		if _, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.KindSetInterpreter, Arg: longer}}, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		after, _ := os.ReadFile(p)
		before, now := notes(t, b), notes(t, after)
		if len(before) == 0 || !maps.EqualFunc(before, now, bytes.Equal) {
			t.Errorf("the notes PT_INTERP covered changed: %d before, %d after", len(before), len(now))
		}
		if s := read(t, p); s.interp != longer {
			t.Errorf("interpreter %q", s.interp)
		}
		runs(t, p)
	})
}

// A dynamic section without a DT_NULL terminator (every slot a real
// entry: the loader would read on past it) is refused as malformed,
// naming the offset where the terminator should be; --add-debug-tag
// appended an entry after it before.
func TestDynamicWithoutTerminatorRefused(t *testing.T) {
	orig, f := readFixture(t, "libfoo.so.1")
	ds := f.ELF().Section(".dynamic")
	f.Close()
	if ds == nil {
		t.Fatal("no .dynamic")
	}
	b := bytes.Clone(orig)
	// Every slot from the first DT_NULL on becomes a DT_DEBUG entry.
	for off := ds.Offset; off+16 <= ds.Offset+ds.Size; off += 16 {
		if binary.LittleEndian.Uint64(b[off:]) == 0 {
			binary.LittleEndian.PutUint64(b[off:], uint64(elf.DT_DEBUG))
		}
	}
	p := writeTemp(t, "libfoo.so.1", b)
	err := editErr(p, patchelf.Edit{Kind: patchelf.KindAddDebugTag})
	if err == nil || !strings.Contains(err.Error(), "malformed file") || !strings.Contains(err.Error(), "no DT_NULL") {
		t.Errorf("err = %v, want a refusal", err)
	}
	if now, _ := os.ReadFile(p); !bytes.Equal(now, b) {
		t.Errorf("the refused file changed")
	}
}

// A growing edit overwrites what it moved with 'Z's and an old RUNPATH
// nobody else references with 'X's, as patchelf does (upstream's
// shared-rpath test): names are not duplicated in the file and the old
// search path does not linger; NoClobberOldSections keeps both.
func TestGrowingEditClobbersWhatItMoved(t *testing.T) {
	first := "/build/tmp-12345/" + strings.Repeat("old", 30)
	second := first + ":" + strings.Repeat("/new", 40)
	third := second + ":" + strings.Repeat("/more", 40)
	for _, keep := range []bool{false, true} {
		p := copyFixture(t, "libfoo.so.1")
		opts := patchelf.Options{NoClobberOldSections: keep}
		edit := func(v string) {
			t.Helper()
			if _, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: v}}, opts, patchelf.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		before, _ := os.ReadFile(p)
		edit(first) // grows: .dynstr moves to the new segment
		after, _ := os.ReadFile(p)
		name := []byte("libfoo.so.1\x00")
		if got, was := bytes.Count(after, name), bytes.Count(before, name); keep != (got > was) {
			t.Errorf("keep=%v: %q appears %d times, %d before", keep, name, got, was)
		}
		edit(second) // grows the table where it now ends the file
		edit(third)
		after, _ = os.ReadFile(p)
		if n := bytes.Count(after, []byte(first+"\x00")); keep != (n > 0) {
			t.Errorf("keep=%v: the first RUNPATH is still there %d times", keep, n)
		}
		if s := read(t, p); s.rpath != third {
			t.Errorf("rpath %q", s.rpath)
		}
		if !keep && (!bytes.Contains(after, []byte("ZZZZZZZZ")) || !bytes.Contains(after, []byte("XXXXXXXX"))) {
			t.Errorf("no 'Z' or 'X' runs in the file")
		}
	}
}

// A program header table placed late in the file (after everything else,
// as some post-link tools leave it) is accepted, and a growing edit of
// the library gives one the real loader loads: the overlap check took
// "the headers" to run from offset 0 to the table's end.
func TestLateProgramHeaderTable(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	b, err := os.ReadFile(testenv.Testdata("libfoo.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	phoff := binary.LittleEndian.Uint64(b[32:])
	n := uint64(binary.LittleEndian.Uint16(b[56:]))
	table := bytes.Clone(b[phoff : phoff+n*56])
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	binary.LittleEndian.PutUint64(b[32:], uint64(len(b)))
	b = append(b, table...)
	p := writeTemp(t, "libfoo.so.1", b)
	dir := t.TempDir()
	src, harness := filepath.Join(dir, "h.c"), filepath.Join(dir, "h")
	os.WriteFile(src, []byte("#include <dlfcn.h>\n#include <stdio.h>\nint main(int c,char**v){void*h=dlopen(v[1],RTLD_NOW|RTLD_LOCAL);if(!h){fprintf(stderr,\"%s\\n\",dlerror());return 1;}return 0;}\n"), 0o644)
	if out, err := exec.Command(gcc, "-o", harness, src, "-ldl").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, out)
	}
	loads := func(what string) {
		t.Helper()
		if out, err := exec.Command(harness, p).CombinedOutput(); err != nil {
			t.Fatalf("%s: dlopen fails: %v %s", what, err, out)
		}
	}
	loads("the input")
	if _, err := patchelf.EditFile(p, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: long}, {Kind: patchelf.KindAddNeeded, Arg: "libm.so.6"}}, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if s := read(t, p); s.rpath != long || s.needed[0] != "libm.so.6" {
		t.Errorf("edit not there: %+v", s)
	}
	loads("the edited library")
}

// A shared library whose program header table is followed by something
// that cannot move (a linker script put .eh_frame right after the
// headers, as upstream's phdr-corruption test does): the table moves into
// the new segment, e_phoff and PT_PHDR follow it, and the library loads
// and its function answers (it was refused: "no room for another program
// header").
func TestTableMovesWhenItCannotGrow(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	script := `PHDRS { headers PT_PHDR PHDRS; text PT_LOAD FILEHDR PHDRS; data PT_LOAD; dynamic PT_DYNAMIC; }
SECTIONS {
  . = SIZEOF_HEADERS;
  .eh_frame : { *(.eh_frame) } :text
  .dynsym : { *(.dynsym) } :text
  .dynstr : { *(.dynstr) } :text
  .gnu.hash : { *(.gnu.hash) } :text
  .hash : { *(.hash) } :text
  .text : { *(.text*) } :text
  . = 0x10000;
  .dynamic : { *(.dynamic) } :data :dynamic
  .data : { *(.data*) } :data
  .got : { *(.got*) } :data
}
`
	files := map[string]string{"s.ld": script, "f.c": "int answer(void){return 42;}\n",
		"h.c": "#include <dlfcn.h>\n#include <stdio.h>\nint main(int c,char**v){void*h=dlopen(v[1],RTLD_NOW);if(!h){puts(dlerror());return 1;}int(*f)(void)=(int(*)(void))dlsym(h,\"answer\");return f&&f()==42?0:2;}\n"}
	for n, c := range files {
		os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644)
	}
	lib := filepath.Join(dir, "libehf.so")
	for _, args := range [][]string{
		{"-shared", "-fPIC", "-nostdlib", "-Wl,--build-id=none", "-o", lib, filepath.Join(dir, "f.c"), "-Wl,-T," + filepath.Join(dir, "s.ld"), "-Wl,-soname,libehf.so"},
		{"-o", filepath.Join(dir, "h"), filepath.Join(dir, "h.c"), "-ldl"},
	} {
		if out, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v %s", args, err, out)
		}
	}
	answers := func(what string) {
		t.Helper()
		if out, err := exec.Command(filepath.Join(dir, "h"), lib).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v %s", what, err, out)
		}
	}
	answers("the input")
	pl, err := patchelf.EditFile(lib, []patchelf.Edit{{Kind: patchelf.KindSetRPath, Arg: long}, {Kind: patchelf.KindAddNeeded, Arg: "libm.so.6"}}, patchelf.Options{}, patchelf.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pl.Moved, "program headers") {
		t.Errorf("moved %v, want the program headers", pl.Moved)
	}
	answers("the edited library")
}

// DT_GNU_HASH whose section header strip --remove-section=.gnu.hash took
// away (upstream's no-gnu-hash test): edits still apply and the program
// runs; renaming, which rewrites the table, is refused naming it.
func TestStrippedHashSection(t *testing.T) {
	strip := testenv.Tool(t, "strip", "binutils")
	p := copyFixture(t, "hello")
	if out, err := exec.Command(strip, "--remove-section=.gnu.hash", p).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v %s", err, out)
	}
	run := func(what string) {
		t.Helper()
		cmd := exec.Command(p)
		cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Dir(testenv.Testdata("libfoo.so.1")))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v %s", what, err, out)
		}
	}
	run("stripped")
	for _, e := range []patchelf.Edit{
		{Kind: patchelf.KindSetInterpreter, Arg: "/lib64/ld-linux-x86-64.so.2"},
		{Kind: patchelf.KindSetRPath, Arg: long},
		{Kind: patchelf.KindAddNeeded, Arg: "libm.so.6"},
	} {
		if _, err := patchelf.EditFile(p, []patchelf.Edit{e}, patchelf.Options{}, patchelf.WriteOptions{}); err != nil {
			t.Fatalf("%v: %v", e.Kind, err)
		}
		run(string(e.Kind))
	}
	err := editErr(p, patchelf.Edit{Kind: patchelf.KindRenameDynamicSymbols, Renames: map[string]string{"foo": "bar"}})
	if err == nil || !strings.Contains(err.Error(), "DT_GNU_HASH") {
		t.Errorf("rename: err = %v, want a refusal naming DT_GNU_HASH", err)
	}
}

// TestSectionHeadersEndTheFile: after a growing edit the section header
// table ends the file, as patchelf 0.19 leaves it, on every byte order
// and class; its old place is clobbered like the vacated sections ('Z')
// unless NoClobberOldSections keeps it; readelf reads the table without a
// warning, strip rewrites the file, and the edited program still runs. An
// edit that fits in place leaves the table where it is.
func TestSectionHeadersEndTheFile(t *testing.T) {
	readelf := testenv.Tool(t, "readelf", "binutils")
	strip := testenv.Tool(t, "strip", "binutils")
	shdrs := func(p string) (off, end, size int64) {
		f, err := elfx.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		raw := f.ELF()
		st, _ := os.Stat(p)
		var shoff int64
		b := make([]byte, 64)
		fh, _ := os.Open(p)
		fh.ReadAt(b, 0)
		fh.Close()
		if raw.Class == elf.ELFCLASS64 {
			shoff = int64(raw.ByteOrder.Uint64(b[40:]))
			return shoff, shoff + int64(len(raw.Sections))*64, st.Size()
		}
		shoff = int64(raw.ByteOrder.Uint32(b[32:]))
		return shoff, shoff + int64(len(raw.Sections))*40, st.Size()
	}
	for _, name := range []string{"libfoo.so.1", "hello", "libi386.so", "libbe.so"} {
		for _, keep := range []bool{false, true} {
			p := copyFixture(t, name)
			oldOff, oldEnd, _ := shdrs(p)
			old, _ := os.ReadFile(p)
			plan, err := patchelf.EditFile(p, []patchelf.Edit{patchelf.SetRunpath(long)}, patchelf.Options{NoClobberOldSections: keep}, patchelf.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			off, end, size := shdrs(p)
			if end != size || off <= oldOff || !slices.Contains(plan.Moved, "section headers") {
				t.Errorf("%s: table at %#x..%#x of a %#x-byte file (was at %#x), moved %v", name, off, end, size, oldOff, plan.Moved)
			}
			now, _ := os.ReadFile(p)
			at := now[oldOff:oldEnd]
			switch {
			case keep && !bytes.Equal(at, old[oldOff:oldEnd]):
				t.Errorf("%s: the old table changed with NoClobberOldSections", name)
			case !keep && bytes.Count(at, []byte{'Z'}) != len(at):
				t.Errorf("%s: the old table was not clobbered", name)
			}
			if out, err := exec.Command(readelf, "-S", "-W", p).CombinedOutput(); err != nil || bytes.Contains(out, []byte("Warning")) {
				t.Errorf("%s: readelf -S: %v %s", name, err, out)
			}
			if name != "libbe.so" { // (the host's strip reads the host's machines only)
				if out, err := exec.Command(strip, "-o", p+".stripped", p).CombinedOutput(); err != nil {
					t.Errorf("%s: strip: %v %s", name, err, out)
				}
			}
			if name == "hello" && !keep {
				cmd := exec.Command(p)
				cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Dir(testenv.Testdata("libfoo.so.1")))
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Errorf("hello after the edit: %v %s", err, out)
				}
			}
		}
	}
	// In place: the table stays.
	p := copyFixture(t, "libfoo.so.1")
	before, _, _ := shdrs(p)
	edit(t, p, patchelf.SetRunpath("$ORIGIN"))
	if after, _, _ := shdrs(p); after != before {
		t.Errorf("an edit in place moved the table from %#x to %#x", before, after)
	}
}
