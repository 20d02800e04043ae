package symcheck

import (
	"context"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
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

// CheckLinkInputs reads objects, archives and shared libraries given
// together (a link line's inputs) and returns the names that objects
// reference and no input defines. Shared libraries only contribute
// definitions.
func CheckLinkInputs(ctx context.Context, paths []string) (*StaticResult, error) {
	paths, err := expandScripts(paths)
	if err != nil {
		return nil, err
	}
	res := &StaticResult{Unresolved: map[string][]string{}, Defined: map[string]bool{}}
	refs := map[string][]string{}
	addObject := func(f *elfx.File, name string) error {
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
			res.Objects++
		}
		for _, s := range syms {
			if s.Name == "" || s.Bind == elf.STB_LOCAL || s.Type == elf.STT_SECTION || s.Type == elf.STT_FILE {
				continue
			}
			if s.Defined() {
				res.Defined[s.Name] = true
				continue
			}
			if f.Type == elf.ET_REL && !s.Weak() {
				refs[s.Name] = append(refs[s.Name], name)
			}
		}
		return nil
	}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pr, err := elfx.OpenProbe(p)
		if err != nil {
			return nil, err
		}
		switch pr.Kind() {
		case elfx.KindArchive, elfx.KindThinArchive:
			a, err := pr.Archive()
			if err != nil {
				return nil, err
			}
			for i := range a.Members {
				sr, err := a.Open(i)
				if err != nil {
					a.Close()
					return nil, err
				}
				if elfx.Sniff(sr) != elfx.KindELF {
					continue // e.g. LLVM bitcode or text members
				}
				f, err := a.OpenELF(i)
				if err == nil {
					err = addObject(f, a.MemberPath(i))
				}
				if err != nil {
					a.Close()
					return nil, err
				}
			}
			a.Close()
		case elfx.KindELF:
			f, err := pr.ELF()
			if err != nil {
				return nil, err
			}
			err = addObject(f, p)
			f.Close()
			if err != nil {
				return nil, err
			}
		default:
			pr.Close()
			return nil, elfx.NotELFOrArchive(p, pr.Head)
		}
	}
	for name, by := range refs {
		if res.Defined[name] || isLinkerDefined(name) {
			res.Satisfied++
			continue
		}
		res.Unresolved[name] = dedupe(by)
	}
	return res, nil
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

// maxScript bounds the GNU ld scripts read as link inputs.
const maxScript = 1 << 20

// expandScripts replaces each GNU ld script among paths (glibc's libc.so,
// libm.so, libm.a) with the files it names in INPUT and GROUP, as the
// linker reads it; scripts may name scripts.
func expandScripts(paths []string) ([]string, error) {
	var out []string
	var add func(p string, depth int) error
	add = func(p string, depth int) error {
		pr, err := elfx.OpenProbe(p)
		if err != nil {
			return err
		}
		script := false
		if pr.Kind() == elfx.KindOther {
			_, script = elfx.LinkerScriptInputs(pr.Head)
		}
		pr.Close()
		if !script {
			out = append(out, p) // read (or refused) by the caller
			return nil
		}
		if depth == 8 {
			return fmt.Errorf("%s: ld scripts nested more than 8 deep", p)
		}
		text, err := regfile.ReadFileMax(p, maxScript)
		if err != nil {
			return err
		}
		in, _ := elfx.LinkerScriptInputs(text)
		for _, name := range in {
			q, err := scriptInput(p, name)
			if err != nil {
				return err
			}
			if err := add(q, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	for _, p := range paths {
		if err := add(p, 0); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// scriptInput finds a file an ld script names: an absolute path as it
// is; a relative one in the current directory, then beside the script;
// -lNAME as libNAME.so, then libNAME.a, beside the script (the linker
// searches its library path, which here is the script's directory).
func scriptInput(script, name string) (string, error) {
	dir := filepath.Dir(script)
	var try []string
	switch {
	case strings.HasPrefix(name, "-l"):
		try = []string{filepath.Join(dir, "lib"+name[2:]+".so"), filepath.Join(dir, "lib"+name[2:]+".a")}
	case filepath.IsAbs(name):
		try = []string{name}
	default:
		try = []string{name, filepath.Join(dir, name)}
	}
	try = slices.Compact(try) // the script in the current directory
	for _, p := range try {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: the ld script names %s, which is not there (looked for %s)", script, name, strings.Join(try, ", "))
}
