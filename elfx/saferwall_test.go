package elfx_test

import (
	"debug/elf"
	"fmt"
	"os"
	"testing"

	swelf "github.com/saferwall/elf"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// saferwallMaxSize bounds the files given to saferwall/elf: it reads a file
// whole into memory and decodes every section (see scripts/bench-saferwall.sh
// for what that costs on Debian's 1.3 GB librocsparse).
const saferwallMaxSize = 256 << 20

// TestCorpusSaferwallAgrees parses every 64-bit ELF file of
// /usr/lib/x86_64-linux-gnu and /usr/bin with saferwall/elf, a second
// parser written independently of Go's debug/elf and of elfx, and compares
// what both read: every section header, every program header, and every
// dynamic symbol with its version. The disagreements that are saferwall's
// and known are counted apart and explained here:
//
//   - saferwall names a version for some versioned symbols only (in the
//     last run 85,600 agreed, and for 138,068 more that elfx reads a
//     version for it named none): versions
//     are compared where saferwall names one, and the others counted;
//   - its Parse requires a dynamic symbol table, so it refuses relocatable
//     objects (crt1.o and the like, libmcheck.a): those are listed.
func TestCorpusSaferwallAgrees(t *testing.T) {
	testenv.Corpus(t)
	files, versioned, versionless := 0, 0, 0
	var refused []string
	for _, root := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/bin"} {
		for _, p := range testenv.ELFFiles(t, root) {
			st, err := os.Stat(p)
			if err != nil || st.Size() > saferwallMaxSize {
				continue
			}
			f, err := elfx.Open(p)
			if err != nil || f.ELF().Class != elf.ELFCLASS64 {
				if f != nil {
					f.Close()
				}
				continue
			}
			sp, err := swelf.New(p)
			if err == nil {
				err = sp.Parse()
			}
			if err != nil {
				refused = append(refused, p+": "+err.Error())
				f.Close()
				sp.CloseFile()
				continue
			}
			files++
			ef := f.ELF()
			sw := sp.F
			if len(sw.SectionHeaders64) != len(ef.Sections) {
				t.Errorf("%s: %d section headers, saferwall %d", p, len(ef.Sections), len(sw.SectionHeaders64))
			} else {
				for i, s := range ef.Sections {
					h := sw.SectionHeaders64[i]
					got := fmt.Sprint(uint32(s.Type), uint64(s.Flags), s.Addr, s.Offset, s.FileSize, s.Link, s.Info, s.Addralign, s.Entsize)
					want := fmt.Sprint(h.Type, h.Flags, h.Addr, h.Off, h.Size, h.Link, h.Info, h.AddrAlign, h.EntSize)
					if s.Type == elf.SHT_NOBITS {
						got = fmt.Sprint(uint32(s.Type), uint64(s.Flags), s.Addr, s.Offset, s.Size, s.Link, s.Info, s.Addralign, s.Entsize)
					}
					if got != want {
						t.Errorf("%s: section %d (%s): %s, saferwall %s", p, i, s.Name, got, want)
					}
					if i < len(sw.Sections64) && sw.Sections64[i].SectionName != s.Name {
						t.Errorf("%s: section %d named %q, saferwall %q", p, i, s.Name, sw.Sections64[i].SectionName)
					}
				}
			}
			if len(sw.ProgramHeaders64) != len(ef.Progs) {
				t.Errorf("%s: %d program headers, saferwall %d", p, len(ef.Progs), len(sw.ProgramHeaders64))
			} else {
				for i, ph := range ef.Progs {
					h := sw.ProgramHeaders64[i]
					got := fmt.Sprint(uint32(ph.Type), uint32(ph.Flags), ph.Off, ph.Vaddr, ph.Filesz, ph.Memsz, ph.Align)
					want := fmt.Sprint(h.Type, h.Flags, h.Off, h.Vaddr, h.Filesz, h.Memsz, h.Align)
					if got != want {
						t.Errorf("%s: program header %d: %s, saferwall %s", p, i, got, want)
					}
				}
			}
			syms, err := f.DynamicSymbols()
			if err != nil {
				t.Errorf("%s: %v", p, err)
			} else if len(sw.NamedSymbols) != len(syms) {
				t.Errorf("%s: %d dynamic symbols, saferwall %d", p, len(syms), len(sw.NamedSymbols))
			} else {
				for i, s := range syms {
					o := sw.NamedSymbols[i]
					if s.Name != o.Name || s.Value != o.Value || s.Size != o.Size || uint16(s.Section) != uint16(o.Index) {
						t.Errorf("%s: dynamic symbol %d: %s %#x %d %d, saferwall %s %#x %d %d", p, i, s.Name, s.Value, s.Size, s.Section, o.Name, o.Value, o.Size, o.Index)
					}
					if o.Version == "" {
						if s.Version != "" {
							versionless++
						}
					} else if versioned++; s.Version != o.Version {
						t.Errorf("%s: dynamic symbol %s: version %q, saferwall %q", p, s.Name, s.Version, o.Version)
					}
				}
			}
			f.Close()
			sp.CloseFile()
		}
	}
	if files == 0 {
		t.Fatal("no file parsed by both")
	}
	t.Logf("saferwall/elf agrees on %d files (%d dynamic symbol versions compared; %d versioned symbols it gives no version); it refused %d: %v", files, versioned, versionless, len(refused), refused)
}

// The cost of reading a library's headers and dynamic symbols, with elfx
// and with saferwall/elf (scripts/bench-saferwall.sh prints the ratios):
// why saferwall stays out of the product.
func BenchmarkParseElfxLLVM(b *testing.B) {
	benchParse(b, "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1", "libllvm15", false)
}
func BenchmarkParseSaferwallLLVM(b *testing.B) {
	benchParse(b, "/usr/lib/x86_64-linux-gnu/libLLVM-15.so.1", "libllvm15", true)
}
func BenchmarkParseElfxRocsparse(b *testing.B) {
	benchParse(b, "/usr/lib/x86_64-linux-gnu/librocsparse.so.0", "librocsparse0", false)
}
func BenchmarkParseSaferwallRocsparse(b *testing.B) {
	benchParse(b, "/usr/lib/x86_64-linux-gnu/librocsparse.so.0", "librocsparse0", true)
}

func benchParse(b *testing.B, path, pkg string, saferwall bool) {
	p := testenv.File(b, path, pkg)
	b.ReportAllocs()
	for b.Loop() {
		if saferwall {
			sp, err := swelf.New(p)
			if err != nil {
				b.Fatal(err)
			}
			if err := sp.Parse(); err != nil {
				b.Fatal(err)
			}
			if len(sp.F.NamedSymbols) == 0 {
				b.Fatal("no symbols")
			}
			sp.CloseFile()
			continue
		}
		f, err := elfx.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		syms, err := f.DynamicSymbols()
		if err != nil || len(syms) == 0 {
			b.Fatal(err)
		}
		f.Close()
	}
}
