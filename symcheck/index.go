package symcheck

import (
	"context"
	"debug/elf"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/walk"
)

// Index maps symbol names to the files in a build tree or prefix that
// define them.
type Index struct {
	defs  map[string][]finding.Provider
	Files int // files indexed
	// For, when set, is the input's ELF class and machine: a file or
	// member of another is no candidate (a 32-bit libc, an amdgcn object).
	For *elfx.Header
}

// Providers returns the definitions of name, sorted.
func (x *Index) Providers(name string) []finding.Provider {
	if x == nil {
		return nil
	}
	return x.defs[name]
}

// BuildIndex walks dirs and records, for every name in want (every name
// when want is nil), the .a/.so/.o files that define it. Archives are read
// through their symbol index (member symbol tables only when an archive has
// no index); shared libraries through .dynsym; objects through .symtab.
// Unreadable files are skipped: an index is a hint, not a verdict.
func BuildIndex(ctx context.Context, dirs []string, want map[string]bool) (*Index, error) {
	return BuildIndexFor(ctx, dirs, want, nil)
}

// BuildIndexFor is BuildIndex keeping only definitions in files (or
// archive members) of for's ELF class and machine when for is not nil.
// Sanitizer and profiling runtimes (compiler-rt's libclang_rt.*, GCC's
// libasan and the like), which define libc's names to intercept them, are
// listed after every other provider and marked.
func BuildIndexFor(ctx context.Context, dirs []string, want map[string]bool, forHdr *elfx.Header) (*Index, error) {
	return buildIndex(ctx, dirs, want, forHdr, false)
}

// buildIndex is BuildIndexFor; sharedOnly passes over archives and objects
// (the system's library directories: their shared libraries are what a
// link would take).
func buildIndex(ctx context.Context, dirs []string, want map[string]bool, forHdr *elfx.Header, sharedOnly bool) (*Index, error) {
	x := &Index{defs: map[string][]finding.Provider{}, For: forHdr}
	add := func(name string, p finding.Provider) {
		if want == nil || want[name] {
			x.defs[name] = append(x.defs[name], p)
		}
	}
	for _, dir := range dirs {
		err := walk.Dir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == dir {
					return err
				}
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if d.IsDir() || !indexable(d.Name()) || sharedOnly && !strings.Contains(d.Name(), ".so") {
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 {
				// Library symlinks (libfoo.so -> libfoo.so.1) would list
				// the same definitions twice.
				return nil
			}
			x.Files++
			x.indexFile(p, add)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, ps := range x.defs {
		for i := range ps {
			if runtimeLibrary(ps[i].File) {
				ps[i].Note = "sanitizer or profiling runtime"
			}
		}
		sort.Slice(ps, func(i, j int) bool {
			if (ps[i].Note == "") != (ps[j].Note == "") {
				return ps[i].Note == ""
			}
			return ps[i].String() < ps[j].String()
		})
	}
	return x, nil
}

// runtimeLibrary reports whether path is a sanitizer or profiling runtime
// by its file name: compiler-rt's libclang_rt.<name>[-<arch>] archives and
// libraries, GCC's libasan, libtsan, liblsan, libubsan, libhwasan and
// libgcov.
func runtimeLibrary(path string) bool {
	base := filepath.Base(path)
	if strings.HasPrefix(base, "libclang_rt.") {
		return true
	}
	for _, p := range []string{"libasan.", "libtsan.", "liblsan.", "libubsan.", "libhwasan.", "libgcov."} {
		if strings.HasPrefix(base, p) {
			return true
		}
	}
	return false
}

// fits reports whether a file of header h can be linked or loaded with the
// input (same class and machine; anything when the index has no input).
func (x *Index) fits(h elfx.Header) bool {
	return x.For == nil || h.Class == x.For.Class && h.Machine == x.For.Machine
}

func indexable(name string) bool {
	return strings.HasSuffix(name, ".a") || strings.HasSuffix(name, ".o") || strings.HasSuffix(name, ".so") || strings.Contains(name, ".so.")
}

func (x *Index) indexFile(p string, add func(string, finding.Provider)) {
	pr, err := elfx.OpenProbe(p)
	if err != nil {
		return
	}
	switch pr.Kind() {
	case elfx.KindArchive, elfx.KindThinArchive:
		a, err := pr.Archive()
		if err != nil {
			return
		}
		defer a.Close()
		if a.HasIndex {
			fit := map[int]bool{} // by member, read once
			for _, s := range a.Symbols {
				m := ""
				if s.Member >= 0 {
					m = a.Members[s.Member].Name
					if x.For != nil {
						ok, seen := fit[s.Member]
						if !seen {
							if f, err := a.OpenELF(s.Member); err == nil {
								ok = x.fits(f.Header)
							}
							fit[s.Member] = ok
						}
						if !ok {
							continue
						}
					}
				}
				add(s.Name, finding.Provider{File: p, Member: m})
			}
			return
		}
		for i, m := range a.Members {
			f, err := a.OpenELF(i)
			if err != nil || !x.fits(f.Header) {
				continue
			}
			syms, _ := f.Symbols()
			for _, s := range syms {
				if exported(s) {
					add(s.Name, finding.Provider{File: p, Member: m.Name})
				}
			}
		}
	case elfx.KindELF:
		f, err := pr.ELF()
		if err != nil {
			return
		}
		defer f.Close()
		if !x.fits(f.Header) {
			return
		}
		var syms []elfx.Symbol
		if f.Type == elf.ET_REL {
			syms, _ = f.Symbols()
		} else {
			syms, _ = f.DynamicSymbols()
		}
		for _, s := range syms {
			if exported(s) {
				add(s.Name, finding.Provider{File: p})
			}
		}
	default:
		pr.Close()
	}
}

func exported(s elfx.Symbol) bool {
	return s.Defined() && s.Name != "" && s.Bind != elf.STB_LOCAL && s.Type != elf.STT_SECTION && s.Type != elf.STT_FILE &&
		s.Visibility != elf.STV_HIDDEN && s.Visibility != elf.STV_INTERNAL
}
