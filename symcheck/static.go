package symcheck

import (
	"context"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/rawpath"
	"github.com/rocmdoctor/rocmdoctor/internal/regfile"
)

// linkerDefined are names the static linker provides itself; a reference to
// them is never unresolved.
var linkerDefined = map[string]bool{
	"_GLOBAL_OFFSET_TABLE_": true, "_DYNAMIC": true, "__ehdr_start": true, "__executable_start": true,
	"_etext": true, "etext": true, "_edata": true, "edata": true, "_end": true, "end": true,
	"__bss_start": true, "__dso_handle": true, ".TOC.": true, "_PROCEDURE_LINKAGE_TABLE_": true,
	"__init_array_start": true, "__init_array_end": true, "__fini_array_start": true, "__fini_array_end": true,
	"__preinit_array_start": true, "__preinit_array_end": true, "__GNU_EH_FRAME_HDR": true, "__TMC_END__": true,
}

func isLinkerDefined(name string) bool {
	return linkerDefined[name] || strings.HasPrefix(name, "__start_") || strings.HasPrefix(name, "__stop_")
}

// StaticResult is the outcome of checking a set of link inputs together.
type StaticResult struct {
	// Objects counts the relocatable objects read (archive members included).
	Objects int
	// Satisfied counts the distinct referenced names defined by an input.
	Satisfied int
	// Unresolved maps each name referenced but never defined to the
	// objects ("archive(member)") that reference it.
	Unresolved map[string][]string
	// Defined is every name defined by an input.
	Defined map[string]bool
}

// UnresolvedNames returns the names in Unresolved, sorted.
func (r *StaticResult) UnresolvedNames() []string {
	names := make([]string, 0, len(r.Unresolved))
	for n := range r.Unresolved {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// CheckLinkInputs reads objects, archives and shared libraries given
// together (a link line's inputs) and returns the names that objects
// reference and no input defines. Shared libraries only contribute
// definitions.
func CheckLinkInputs(ctx context.Context, paths []string) (*StaticResult, error) {
	return checkLinkInputs(ctx, paths, "")
}

// LinkInputs gathers what link inputs define and what their objects
// reference, of the names that start with only ("" for every name).
type LinkInputs struct {
	only string
	res  *StaticResult
	refs map[string][]string
}

// NewLinkInputs gathers the names that start with only ("" for all).
func NewLinkInputs(only string) *LinkInputs {
	return &LinkInputs{only: only, res: &StaticResult{Unresolved: map[string][]string{}, Defined: map[string]bool{}}, refs: map[string][]string{}}
}

// addRelocatable reads a relocatable object with EachObjectSymbol, which
// reads only the symbol and string tables (and, with only set, skips an
// object whose string table has no such name); it reports false, having
// read nothing, for an object that is not read plainly: addObject then
// reads it opened as ELF, which says what is wrong with it.
func (l *LinkInputs) addRelocatable(r io.ReaderAt, size int64, name func() string) bool {
	var by string
	plain := elfx.EachObjectSymbol(r, size, l.only, func(s elfx.ObjectSymbol) {
		if len(s.Name) == 0 || s.Bind == elf.STB_LOCAL || s.Type == elf.STT_SECTION || s.Type == elf.STT_FILE {
			return
		}
		if s.Section != elf.SHN_UNDEF {
			l.res.Defined[string(s.Name)] = true
			return
		}
		if s.Bind != elf.STB_WEAK {
			if by == "" {
				by = name()
			}
			l.refs[string(s.Name)] = append(l.refs[string(s.Name)], by)
		}
	})
	if plain {
		l.res.Objects++
	}
	return plain
}

func (l *LinkInputs) addObject(f *elfx.File, name string) error {
	syms, err := f.Symbols()
	if err != nil {
		return err
	}
	if f.Type != elf.ET_REL {
		// A shared library on the link line: its exported symbols.
		if syms, err = f.DynamicSymbols(); err != nil {
			return err
		}
	} else {
		l.res.Objects++
	}
	for _, s := range syms {
		if s.Name == "" || s.Bind == elf.STB_LOCAL || s.Type == elf.STT_SECTION || s.Type == elf.STT_FILE || !strings.HasPrefix(s.Name, l.only) {
			continue
		}
		if s.Defined() {
			l.res.Defined[s.Name] = true
			continue
		}
		if f.Type == elf.ET_REL && !s.Weak() {
			l.refs[s.Name] = append(l.refs[s.Name], name)
		}
	}
	return nil
}

// AddMember reads member i of a, open as sr; members that are not ELF
// (LLVM bitcode, text) are passed over.
func (l *LinkInputs) AddMember(a *elfx.Archive, i int, sr *io.SectionReader) error {
	if elfx.Sniff(sr) != elfx.KindELF {
		return nil
	}
	if l.addRelocatable(sr, sr.Size(), func() string { return a.MemberPath(i) }) {
		return nil
	}
	f, err := a.OpenELF(i)
	if err != nil {
		return err
	}
	return l.addObject(f, a.MemberPath(i))
}

// Result is what the inputs left unresolved.
func (l *LinkInputs) Result() *StaticResult {
	for name, by := range l.refs {
		if l.res.Defined[name] || isLinkerDefined(name) {
			l.res.Satisfied++
			continue
		}
		l.res.Unresolved[name] = dedupe(by)
	}
	return l.res
}

// checkLinkInputs is CheckLinkInputs for the names that start with only
// ("" for every name): what the other names do is not read, nor counted
// in Satisfied.
func checkLinkInputs(ctx context.Context, paths []string, only string) (*StaticResult, error) {
	l := NewLinkInputs(only)
	// The inputs in order; a GNU ld script among them is replaced, where
	// it stands, by the files it names (depth counts nested scripts).
	type input struct {
		path  string
		depth int
	}
	work := make([]input, len(paths))
	for i, p := range paths {
		work[i] = input{p, 0}
	}
	for len(work) > 0 {
		in := work[0]
		work = work[1:]
		p := in.path
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pr, err := elfx.OpenProbe(p)
		if err != nil {
			return nil, err
		}
		switch pr.Kind() {
		case elfx.KindArchive, elfx.KindThinArchive:
			a, err := pr.ArchiveMembers()
			if err != nil {
				return nil, err
			}
			for i := range a.Members {
				sr, err := a.Open(i)
				if err == nil {
					err = l.AddMember(a, i, sr)
				}
				if err != nil {
					a.Close()
					return nil, err
				}
			}
			a.Close()
		case elfx.KindELF:
			if l.addRelocatable(pr, pr.Info.Size(), func() string { return p }) {
				pr.Close()
				continue
			}
			f, err := pr.ELF()
			if err != nil {
				return nil, err
			}
			err = l.addObject(f, p)
			f.Close()
			if err != nil {
				return nil, err
			}
		default:
			_, script := elfx.LinkerScriptInputs(pr.Head)
			if !script {
				err := elfx.NotELFOrArchive(p, pr.Head)
				pr.Close()
				return nil, err
			}
			pr.Close()
			named, err := scriptInputs(p, in.depth)
			if err != nil {
				return nil, err
			}
			next := make([]input, 0, len(named)+len(work))
			for _, q := range named {
				next = append(next, input{q, in.depth + 1})
			}
			work = append(next, work...)
		}
	}
	return l.Result(), nil
}

func dedupe(xs []string) []string {
	sort.Strings(xs)
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// maxScript bounds the GNU ld scripts read as link inputs (glibc's are a
// few hundred bytes).
const maxScript = 1 << 20

// scriptInputs reads the GNU ld script p (depth scripts deep) and finds
// the files its INPUT and GROUP commands name.
func scriptInputs(p string, depth int) ([]string, error) {
	if depth == 8 {
		return nil, fmt.Errorf("%s: ld scripts nested more than 8 deep", p)
	}
	text, err := regfile.ReadFileMax(p, maxScript)
	if err != nil {
		return nil, err
	}
	names, _ := elfx.LinkerScriptInputs(text)
	out := make([]string, 0, len(names))
	for _, name := range names {
		q, err := scriptInput(p, name)
		if err != nil {
			return nil, err
		}
		out = append(out, q)
	}
	return out, nil
}

// scriptInput finds a file an ld script names: an absolute path as it
// is; a relative one in the current directory, then beside the script;
// -lNAME as libNAME.so, then libNAME.a, beside the script (the linker
// searches its library path, which here is the script's directory).
func scriptInput(script, name string) (string, error) {
	dir := rawpath.Dir(script) // uncleaned, as the linker joins it
	var try []string
	switch {
	case strings.HasPrefix(name, "-l"):
		try = []string{rawpath.Join(dir, "lib"+name[2:]+".so"), rawpath.Join(dir, "lib"+name[2:]+".a")}
	case filepath.IsAbs(name):
		try = []string{name}
	default:
		try = []string{name, rawpath.Join(dir, name)}
	}
	try = slices.Compact(try) // the script in the current directory
	for _, p := range try {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: the ld script names %s, which is not there (looked for %s)", script, name, strings.Join(try, ", "))
}
