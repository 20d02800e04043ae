package symcheck

import (
	"context"
	"debug/elf"
	"io/fs"
	"sort"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/walk"
)

// Index maps symbol names to the files in a build tree or prefix that
// define them.
type Index struct {
	defs  map[string][]Provider
	Files int // files indexed
}

// Providers returns the definitions of name, sorted.
func (x *Index) Providers(name string) []Provider {
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
	x := &Index{defs: map[string][]Provider{}}
	add := func(name string, p Provider) {
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
			if d.IsDir() || !indexable(d.Name()) {
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
	for k := range x.defs {
		sort.Slice(x.defs[k], func(i, j int) bool { return x.defs[k][i].String() < x.defs[k][j].String() })
	}
	return x, nil
}

func indexable(name string) bool {
	return strings.HasSuffix(name, ".a") || strings.HasSuffix(name, ".o") || strings.HasSuffix(name, ".so") || strings.Contains(name, ".so.")
}

func (x *Index) indexFile(p string, add func(string, Provider)) {
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
			for _, s := range a.Symbols {
				m := ""
				if s.Member >= 0 {
					m = a.Members[s.Member].Name
				}
				add(s.Name, Provider{File: p, Member: m})
			}
			return
		}
		for i, m := range a.Members {
			f, err := a.OpenELF(i)
			if err != nil {
				continue
			}
			syms, _ := f.Symbols()
			for _, s := range syms {
				if exported(s) {
					add(s.Name, Provider{File: p, Member: m.Name})
				}
			}
		}
	case elfx.KindELF:
		f, err := pr.ELF()
		if err != nil {
			return
		}
		defer f.Close()
		var syms []elfx.Symbol
		if f.Type == elf.ET_REL {
			syms, _ = f.Symbols()
		} else {
			syms, _ = f.DynamicSymbols()
		}
		for _, s := range syms {
			if exported(s) {
				add(s.Name, Provider{File: p})
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
