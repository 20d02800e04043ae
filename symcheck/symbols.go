package symcheck

import (
	"context"
	"debug/elf"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// SymbolsSchemaVersion is the version of the Report JSON layout.
const SymbolsSchemaVersion = 1

// SymbolsOptions configure Symbols. The zero value binds a file's own
// references against its closure as this machine's loader resolves it.
type SymbolsOptions struct {
	Resolver rpath.Options
	// Closure binds the undefined symbols of every loaded object, not only
	// the file's own.
	Closure bool
	// IndexDirs are build trees or prefixes searched for definitions of
	// unresolved names.
	IndexDirs []string
	// Filter keeps only symbols whose raw or demangled name matches this
	// glob (filepath.Match syntax); "" keeps all.
	Filter string
	// Host, when set, is the program that loads the one shared object given
	// with dlopen(): the object is bound in the program's closure
	// (Binder.BindInHost).
	Host string
}

// Report is the result of Symbols.
type Report struct {
	SchemaVersion int      `json:"schema_version"`
	Mode          string   `json:"mode"` // "dynamic" (bound like ld.so) or "link-inputs"
	Inputs        []string `json:"inputs"`
	// Host is the program the input was bound in (--host).
	Host string `json:"host,omitempty"`
	// Objects counts loaded objects (dynamic) or relocatable objects read.
	Objects int `json:"objects"`
	// Satisfied counts references bound (dynamic) or names defined inside
	// the inputs (link-inputs).
	Satisfied    int               `json:"satisfied"`
	Findings     []finding.Finding `json:"findings"`
	LLVM         *LLVMDiagnosis    `json:"llvm,omitempty"`
	IndexedFiles int               `json:"indexed_files,omitempty"`
	// Warnings are what resolution worked around (a damaged
	// ld.so.cache: rpath.Options.Warn), each once.
	Warnings []string `json:"warnings,omitempty"`
}

// Errors counts findings of severity error.
func (r *Report) Errors() int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == finding.SeverityError {
			n++
		}
	}
	return n
}

// Symbols explains the undefined symbols of paths. A single shared library
// or executable is bound against its resolved closure like ld.so does; any
// other combination (archives, objects, several files) is treated as the
// inputs of one link: names referenced by an object and defined by no input.
func Symbols(ctx context.Context, paths []string, opts SymbolsOptions) (*Report, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no input files")
	}
	if opts.Filter != "" {
		if _, err := filepath.Match(opts.Filter, ""); err != nil {
			return nil, fmt.Errorf("--filter %q: %w", opts.Filter, err)
		}
	}
	rep := &Report{SchemaVersion: SymbolsSchemaVersion, Inputs: paths, Host: opts.Host, Findings: []finding.Finding{}}
	opts.Resolver.KeepWarnings(&rep.Warnings)
	dynamic, err := isDynamicInput(paths)
	if err != nil {
		return nil, err
	}
	// The input's class and machine, read once for the candidates of the
	// index, the toolchain's libraries and the LLVM link set.
	var hdr *elfx.Header
	if !dynamic || len(opts.IndexDirs) > 0 {
		hdr = inputHeader(paths)
	}
	if opts.Host != "" && (!dynamic || len(paths) != 1) {
		return nil, fmt.Errorf("--host %s: give one shared object for the program to load", opts.Host)
	}
	var defined func(string) bool
	var inClosure map[string]bool
	if dynamic {
		defined, inClosure, err = rep.bindDynamic(ctx, paths[0], opts)
	} else {
		defined, inClosure, err = rep.linkInputs(ctx, paths, opts, hdr)
	}
	if err != nil {
		return nil, err
	}
	var unresolved []string
	for _, f := range rep.Findings {
		if f.Symbol != "" {
			unresolved = append(unresolved, f.Symbol)
		}
	}
	var idx *Index
	if len(opts.IndexDirs) > 0 {
		if idx, err = rep.provide(ctx, unresolved, inClosure, opts, hdr); err != nil {
			return nil, err
		}
	}
	rep.LLVM = DiagnoseLLVM(unresolved, defined, idx)
	if rep.LLVM != nil && len(opts.IndexDirs) > 0 {
		if err := rep.llvmLinkSet(ctx, defined, opts, hdr); err != nil {
			return nil, err
		}
	}
	if opts.Filter != "" {
		kept := rep.Findings[:0]
		for _, f := range rep.Findings {
			if f.Symbol == "" || matchGlob(opts.Filter, f.Symbol) || (f.Demangled != "" && matchGlob(opts.Filter, f.Demangled)) {
				kept = append(kept, f)
			}
		}
		rep.Findings = kept
	}
	return rep, nil
}

// bindDynamic binds the shared object or program at path in its closure
// (or in opts.Host's); it returns what the closure defines and the files
// in it.
func (rep *Report) bindDynamic(ctx context.Context, path string, opts SymbolsOptions) (defined func(string) bool, inClosure map[string]bool, err error) {
	rep.Mode = "dynamic"
	b := NewBinder(rpath.New(opts.Resolver))
	var res *DynamicResult
	if opts.Host != "" {
		res, err = b.BindInHost(ctx, opts.Host, path, opts.Closure)
	} else {
		res, err = b.BindDynamic(ctx, path, opts.Closure)
	}
	if err != nil {
		return nil, nil, err
	}
	rep.Objects = len(res.Closure.Objects)
	rep.Satisfied = res.Bound
	rep.Findings = append(rep.Findings, res.Findings...)
	inClosure = map[string]bool{}
	for _, o := range res.Closure.Objects {
		inClosure[canonical(o.Path)] = true
	}
	return res.Defined, inClosure, nil
}

// linkInputs reports what a set of objects and archives leaves
// unresolved, as the link would, with what the system or the toolchain
// supplies told apart; it returns what the inputs define and the inputs.
func (rep *Report) linkInputs(ctx context.Context, paths []string, opts SymbolsOptions, hdr *elfx.Header) (defined func(string) bool, inClosure map[string]bool, err error) {
	rep.Mode = "link-inputs"
	res, err := CheckLinkInputs(ctx, paths)
	if err != nil {
		return nil, nil, err
	}
	rep.Objects, rep.Satisfied = res.Objects, res.Satisfied
	for _, n := range res.UnresolvedNames() {
		by := res.Unresolved[n]
		rep.Findings = append(rep.Findings, finding.Finding{
			Rule: finding.RuleUnresolvedStatic, Severity: finding.SeverityError, File: strings.Join(paths, " "), Symbol: n,
			Demangled: finding.Demangle(n), ReferencedBy: by,
			Message: fmt.Sprintf("%s is referenced by %d object(s) (%s) and defined by none of the inputs", n, len(by), summarize(by)),
			Fix:     "add the library or archive that defines it to the link (see --index)",
		})
	}
	inClosure = map[string]bool{}
	for _, p := range paths {
		inClosure[canonical(p)] = true
	}
	if hdr != nil && len(rep.Findings) > 0 {
		if err := systemNames(ctx, rep.Findings, rpath.New(opts.Resolver), *hdr); err != nil {
			return nil, nil, err
		}
		// The truly unresolved first, then what a system library
		// defines, then what the toolchain supplies.
		rank := map[finding.Severity]int{finding.SeverityError: 0, finding.SeverityWarning: 1, finding.SeverityNote: 2}
		sort.SliceStable(rep.Findings, func(i, j int) bool { return rank[rep.Findings[i].Severity] < rank[rep.Findings[j].Severity] })
	}
	return func(n string) bool { return res.Defined[n] }, inClosure, nil
}

// provide indexes opts.IndexDirs for the unresolved names and adds to each
// finding the archives and libraries that define its symbol.
func (rep *Report) provide(ctx context.Context, unresolved []string, inClosure map[string]bool, opts SymbolsOptions, hdr *elfx.Header) (*Index, error) {
	want := map[string]bool{}
	for _, n := range unresolved {
		want[n] = true
	}
	idx, err := BuildIndexFor(ctx, opts.IndexDirs, want, hdr)
	if err != nil {
		return nil, err
	}
	rep.IndexedFiles = idx.Files
	for i := range rep.Findings {
		f := &rep.Findings[i]
		for _, p := range idx.Providers(f.Symbol) {
			p.InClosure = inClosure[canonical(p.File)]
			f.Providers = append(f.Providers, p)
		}
		// (What the toolchain or a system library supplies keeps its
		// fix.)
		if len(f.Providers) > 0 && f.Rule != finding.RuleVersionMismatch && f.Severity == finding.SeverityError {
			f.Fix = "link " + providerFiles(f.Providers)
		}
	}
	return idx, nil
}

// llvmLinkSet adds to the LLVM diagnosis the libraries of the index that
// close the LLVMInitialize* gap, with what they need in turn.
func (rep *Report) llvmLinkSet(ctx context.Context, defined func(string) bool, opts SymbolsOptions, hdr *elfx.Header) error {
	set, cyclic, err := llvmLinkSet(ctx, opts.IndexDirs, rep.LLVM, defined, hdr)
	if err != nil || len(set) == 0 {
		return err
	}
	rep.LLVM.LinkSet, rep.LLVM.LinkGroup = set, cyclic
	how := "in this order"
	if cyclic {
		how = "as one group (-Wl,--start-group … -Wl,--end-group): some need each other"
	}
	rep.LLVM.Fix = fmt.Sprintf("link %s (%s; the missing libraries and what they need in turn, found in the index), or build LLVM with LLVM_TARGETS_TO_BUILD limited to %s",
		strings.Join(set, " "), how, orDefault(strings.Join(rep.LLVM.Linked, ";"), "the targets actually used"))
	return nil
}

// toolchainLibs are the shared C and C++ runtime libraries a compiler
// driver links into every program and library: what the inputs leave to
// them is supplied at link time without being named on the link line.
var toolchainLibs = []string{"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1"}

// systemNames lowers the link-input findings of names the toolchain's
// runtime libraries define (a note naming the library) or that another
// library of the system's library directories defines (a warning: link it),
// read from the libraries themselves for machine h. What neither defines
// stays an error.
func systemNames(ctx context.Context, fs []finding.Finding, r *rpath.Resolver, h elfx.Header) error {
	dirs := r.LinkerDirs(h)
	toolchain := map[string]string{} // name -> library
	for _, lib := range toolchainLibs {
		for _, d := range dirs {
			f, err := elfx.Open(filepath.Join(d, lib))
			if err != nil {
				continue
			}
			if f.Header.Class == h.Class && f.Header.Machine == h.Machine {
				t, err := f.DynamicSymbolTable()
				if err == nil {
					for i := range fs {
						n := fs[i].Symbol
						if _, ok := toolchain[n]; !ok && n != "" && defines(t.Lookup(n)) {
							toolchain[n] = filepath.Join(d, lib)
						}
					}
				}
				f.Close()
				break
			}
			f.Close()
		}
	}
	// LLVM's names are the LLVMInitialize* diagnosis's: a system LLVM of
	// another version is no answer for them.
	want := map[string]bool{}
	for _, f := range fs {
		if _, ok := toolchain[f.Symbol]; !ok && f.Symbol != "" && !HoldsLLVMName([]byte(f.Symbol)) {
			want[f.Symbol] = true
		}
	}
	var idx *Index
	if len(want) > 0 {
		var err error
		if idx, err = buildIndex(ctx, dirs, want, &h, true); err != nil {
			return err
		}
	}
	for i := range fs {
		f := &fs[i]
		if lib, ok := toolchain[f.Symbol]; ok {
			f.Providers = append(f.Providers, finding.Provider{File: lib, Note: "toolchain"})
			f.Severity = finding.SeverityNote
			f.Message += " — supplied by the toolchain's " + lib + ", which the compiler driver links"
			f.Fix = "none: the compiler driver links " + filepath.Base(lib)
			continue
		}
		for _, p := range idx.Providers(f.Symbol) {
			if p.Note != "" || !strings.Contains(filepath.Base(p.File), ".so") {
				continue
			}
			f.Providers = append(f.Providers, finding.Provider{File: p.File, Note: "system library"})
			f.Severity = finding.SeverityWarning
			f.Message += " — defined by the system's " + p.File
			f.Fix = "add " + linkFlag(p.File) + " to the link"
			break
		}
	}
	return nil
}

// defines reports whether one of syms is an exported definition.
func defines(syms []elfx.Symbol) bool {
	for _, s := range syms {
		if exported(s) {
			return true
		}
	}
	return false
}

// linkFlag is the -l option that links the library at path (-lz for
// libz.so.1), or the path itself.
func linkFlag(path string) string {
	base := filepath.Base(path)
	if name, ok := strings.CutPrefix(base, "lib"); ok {
		if i := strings.Index(name, ".so"); i > 0 {
			return "-l" + name[:i]
		}
	}
	return path
}

// inputHeader is the ELF class and machine of the first input (an
// archive's first ELF member), which index candidates must share; nil when
// none is read.
func inputHeader(paths []string) *elfx.Header {
	for _, p := range paths {
		pr, err := elfx.OpenProbe(p)
		if err != nil {
			continue
		}
		switch pr.Kind() {
		case elfx.KindELF:
			f, err := pr.ELFSegments()
			if err == nil {
				h := f.Header
				f.Close()
				return &h
			}
		case elfx.KindArchive, elfx.KindThinArchive:
			a, err := pr.Archive()
			if err != nil {
				continue
			}
			for i := range a.Members {
				if f, err := a.OpenELF(i); err == nil {
					h := f.Header
					a.Close()
					return &h
				}
			}
			a.Close()
		default:
			pr.Close()
		}
	}
	return nil
}

func matchGlob(pattern, s string) bool {
	ok, _ := filepath.Match(pattern, s)
	return ok
}

func canonical(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func providerFiles(ps []finding.Provider) string {
	seen := map[string]bool{}
	var out []string
	for _, p := range ps {
		if p.Note != "" && len(out) > 0 {
			break // (runtimes come last: named only when nothing else is)
		}
		if !seen[p.File] {
			seen[p.File] = true
			out = append(out, p.File)
		}
	}
	if len(out) > 3 {
		return strings.Join(out[:3], ", ") + fmt.Sprintf(" (or %d more)", len(out)-3)
	}
	return strings.Join(out, ", ")
}

func summarize(xs []string) string {
	if len(xs) <= 3 {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:3], ", ") + fmt.Sprintf(", … %d more", len(xs)-3)
}

// isDynamicInput reports whether paths is a single linked ELF file (shared
// library or executable), from each file's head: the command that follows
// parses the files.
func isDynamicInput(paths []string) (bool, error) {
	var t elf.Type
	for _, p := range paths {
		pr, err := elfx.OpenProbe(p)
		if err != nil {
			return false, err
		}
		k := pr.Kind()
		t = pr.Type()
		if k == elfx.KindOther {
			// With other inputs an ld script is one of the link's
			// (CheckLinkInputs reads what it names); alone it is not
			// what the user meant to check.
			if _, script := elfx.LinkerScriptInputs(pr.Head); !script || len(paths) == 1 {
				err := elfx.NotELFOrArchive(p, pr.Head)
				pr.Close()
				return false, err
			}
		}
		pr.Close()
	}
	return len(paths) == 1 && (t == elf.ET_DYN || t == elf.ET_EXEC), nil
}
