package check

import (
	"context"
	"debug/elf"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

// elfScan is what the scan-wide rules need of one ELF file of the scan.
type elfScan struct {
	path    string
	id      elfx.FileID
	soname  string
	needed  []string
	program bool
	library bool // a shared object that is not a program
	// boundInHost: a Python extension bound in the interpreter (check
	// --python), whose gaps no other evidence explains away.
	boundInHost bool
	// A program's closure (file identities) and the NEEDED names the
	// loader would not find for it.
	closure map[elfx.FileID]bool
	missing []string
	found   map[string]string // NEEDED name -> the path the loader takes
}

// scanOf is the scan facts of the file at path, bound as dr.
func scanOf(path string, id elfx.FileID, ff *fileFacts, dr *symcheck.DynamicResult) *elfScan {
	e := &elfScan{path: path, id: id, program: ff.program()}
	if d := ff.dyn; d != nil {
		e.soname, e.needed = d.Soname, d.Needed
	}
	e.library = ff.typ == elf.ET_DYN && !e.program && !ff.hasInterp
	if e.program && dr.Closure != nil {
		e.closure = map[elfx.FileID]bool{}
		e.found = map[string]string{}
		for _, o := range dr.Closure.Objects {
			e.closure[o.ID()] = true
			for _, d := range o.Deps {
				if d.Path != "" {
					e.found[d.Name] = d.Path
				}
			}
		}
		for _, m := range dr.Closure.Missing() {
			e.missing = append(e.missing, m.Name)
		}
	}
	return e
}

// designed is an interface a program supplies by design to a library it
// loads: the library's SONAME, the prefix of the names, and where the
// interface is defined.
type designed struct {
	soname, prefix, source string
}

// byDesign are the interfaces libraries leave to their program on purpose.
var byDesign = []designed{
	// libthread_db calls back into the debugger through proc_service.
	{"libthread_db.so.1", "ps_", "glibc's proc_service.h: the debugger that loads libthread_db (gdb) defines the ps_* callbacks"},
}

// scanWide lowers the undefined-symbol and missing-library errors of the
// scanned files where the rest of the scan shows how the file is used:
// it rewrites the findings in place (see Evidence for the kinds).
func scanWide(ctx context.Context, b *symcheck.Binder, files []*scanned) {
	var all []*elfScan
	neededBy := map[string]bool{}
	for _, s := range files {
		if s.elf != nil {
			all = append(all, s.elf)
			for _, n := range s.elf.needed {
				neededBy[filepath.Base(n)] = true // (a NEEDED path: its file name)
			}
		}
	}
	w := &wide{ctx: ctx, b: b, all: all, neededBy: neededBy, tables: map[elfx.FileID]*symcheck.Table{}, dlopenPaths: map[elfx.FileID][]string{}}
	for _, s := range files {
		if s.elf != nil && len(s.findings) > 0 {
			w.file(s)
		}
	}
}

type wide struct {
	ctx      context.Context
	b        *symcheck.Binder
	all      []*elfScan
	neededBy map[string]bool
	tables   map[elfx.FileID]*symcheck.Table
	// dlopenPaths caches pathNames.
	dlopenPaths map[elfx.FileID][]string
}

// table is the symbol table of a file of the scan (nil when unreadable).
func (w *wide) table(e *elfScan) *symcheck.Table {
	if t, ok := w.tables[e.id]; ok {
		return t
	}
	t, ok := w.b.Tables().Lookup(e.id, e.path)
	if !ok {
		t, _ = w.b.Tables().ReadPath(e.path)
	}
	w.tables[e.id] = t
	return t
}

// defines reports whether e exports every name.
func (w *wide) defines(e *elfScan, names []string) bool {
	t := w.table(e)
	if t == nil || !t.Symbols().Searched() {
		return false
	}
	for _, n := range names {
		if !t.Defines(n) {
			return false
		}
	}
	return true
}

func (w *wide) file(s *scanned) {
	e := s.elf
	var undef []string
	for _, f := range s.findings {
		if f.Rule == finding.RuleUndefinedSymbol && f.Severity == finding.SeverityError && f.File == e.path {
			undef = append(undef, f.Symbol)
		}
	}
	if len(undef) > 0 && !e.boundInHost {
		if ev, fix := w.undefinedEvidence(e, undef); ev != nil {
			for i := range s.findings {
				f := &s.findings[i]
				if f.Rule == finding.RuleUndefinedSymbol && f.Severity == finding.SeverityError && f.File == e.path {
					applyEvidence(f, ev, fix)
				}
			}
		}
	}
	for i := range s.findings {
		f := &s.findings[i]
		if f.Rule == finding.RuleMissingSoname && f.Severity == finding.SeverityWarning && w.module(e) {
			// A module is loaded by path: it needs no SONAME.
			f.Severity, f.Evidence = finding.SeverityNote, &finding.Evidence{Kind: "module"}
			f.Message += " — NEEDED by nothing in the scan: a module loaded with dlopen(), which needs none"
		}
		if f.Rule == finding.RuleMissingLibrary && f.Severity == finding.SeverityError && f.File == e.path {
			if l, by := w.loadedByPath(e, f.Library); l != nil {
				f.Rule, f.Severity = finding.RuleProgramContext, finding.SeverityNote
				f.Evidence = &finding.Evidence{Kind: "program-context", Program: by, Libraries: []string{l.path}}
				f.Message += fmt.Sprintf(" — %s is in the scan at %s, which %s loads by path with dlopen() (it holds a path ending in /%s): a file loaded after it finds it loaded", f.Library, l.path, by, filepath.Base(l.path))
				f.Fix = "none needed where the file is loaded after " + l.path + "; to load it on its own, add that directory to its RUNPATH: rocmdoctor patchelf --add-rpath " + filepath.Dir(l.path) + " " + e.path
				continue
			}
			if p := w.loadedWith(e, f.Library); p != nil {
				f.Rule, f.Severity = finding.RuleProgramContext, finding.SeverityNote
				f.Evidence = &finding.Evidence{Kind: "program-context", Program: p.path}
				f.Message += fmt.Sprintf(" — in the process of %s, which loads this file, %s is found through the program's own search path and reused", p.path, f.Library)
				f.Fix = "none needed where the file is used by " + p.path + "; to load it on its own, add the library's directory to its RUNPATH: rocmdoctor patchelf --add-rpath " + filepath.Dir(p.found[f.Library]) + " " + e.path
			}
		}
	}
}

// module reports whether e is a shared object without SONAME that nothing
// in the scan NEEDs: only dlopen() (by path) loads it.
func (w *wide) module(e *elfScan) bool {
	return e.library && e.soname == "" && !w.neededBy[filepath.Base(e.path)]
}

// undefinedEvidence explains all of a file's undefined names at once, or
// returns nil: one name the scan cannot account for keeps every error.
func (w *wide) undefinedEvidence(e *elfScan, names []string) (*finding.Evidence, string) {
	for _, d := range byDesign {
		if e.soname == d.soname && !slices.ContainsFunc(names, func(n string) bool { return !strings.HasPrefix(n, d.prefix) }) {
			return &finding.Evidence{Kind: "by-design", Source: d.source}, "none: the program that loads it supplies these by design"
		}
	}
	// LLVM's names are the LLVMInitialize* diagnosis's: a program that
	// exports them (ROCm's opt and clang export their LLVM for plugins)
	// does not make a library that misses them its plugin.
	llvm := slices.ContainsFunc(names, func(n string) bool { return symcheck.HoldsLLVMName([]byte(n)) })
	for _, p := range w.all {
		if !llvm && p.program && w.defines(p, names) {
			return &finding.Evidence{Kind: "host-program", Program: p.path}, "none where " + p.path + " loads it; to check: rocmdoctor symbols --host " + p.path + " " + e.path
		}
	}
	if w.module(e) {
		return &finding.Evidence{Kind: "module"}, "check it in the program that loads it: rocmdoctor symbols --host PROGRAM " + e.path
	}
	return w.underlinked(e, names)
}

// underlinked finds, for each name, a library of the scan that defines it
// and that e does not NEED, preferring one that defines the most names.
// LLVM's and MLIR's names are never explained so: another LLVM in the
// scan (a distribution's libLLVM beside a ROCm build's) defining
// LLVMInitializeX86Target is the mix the LLVMInitialize* diagnosis warns
// of, not the fix.
func (w *wide) underlinked(e *elfScan, names []string) (*finding.Evidence, string) {
	for _, n := range names {
		if symcheck.HoldsLLVMName([]byte(n)) {
			return nil, ""
		}
	}
	left := slices.Clone(names)
	var libs []*elfScan
	for len(left) > 0 {
		var best *elfScan
		var bestN []string
		for _, l := range w.all {
			if !l.library || l.soname == "" || l == e || slices.Contains(e.needed, l.soname) || slices.Contains(libs, l) {
				continue
			}
			t := w.table(l)
			if t == nil || !t.Symbols().Searched() {
				continue
			}
			var got []string
			for _, n := range left {
				if t.Defines(n) {
					got = append(got, n)
				}
			}
			if len(got) > len(bestN) || len(got) == len(bestN) && len(got) > 0 && l.path < best.path {
				best, bestN = l, got
			}
		}
		if best == nil {
			return nil, ""
		}
		libs = append(libs, best)
		left = slices.DeleteFunc(left, func(n string) bool { return slices.Contains(bestN, n) })
	}
	ev := &finding.Evidence{Kind: "underlinked"}
	fix := "rocmdoctor patchelf"
	var dirs []string
	res, err := w.b.Resolver().Resolve(w.ctx, e.path)
	for _, l := range libs {
		ev.Libraries = append(ev.Libraries, l.path)
		fix += " --add-needed " + l.soname
		// Where the loader would not find it from the file, its
		// directory goes on the RUNPATH too.
		if d := filepath.Dir(l.path); (err != nil || !sameFile(w.b.Resolver().Lookup(res, res.Root, l.soname).Path, l.id)) && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		fix += " --add-rpath " + d
	}
	return ev, "link it with the librar" + plural(len(libs), "y", "ies") + " that define" + plural(len(libs), "s", "") + " these names, or: " + fix + " " + e.path
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// applyEvidence rewrites an undefined-symbol error by its evidence.
func applyEvidence(f *finding.Finding, ev *finding.Evidence, fix string) {
	f.Evidence, f.Fix = ev, fix
	switch ev.Kind {
	case "underlinked":
		f.Rule, f.Severity = finding.RuleUnderlinked, finding.SeverityWarning
		f.Message += " — defined by " + strings.Join(ev.Libraries, ", ") + " in the scan, which the file does not NEED: it loads only where a program loads that library first"
	case "host-program":
		f.Rule, f.Severity = finding.RuleModuleUndefined, finding.SeverityNote
		f.Message += " — defined by " + ev.Program + " in the scan: a plugin of that program"
	case "by-design":
		f.Rule, f.Severity = finding.RuleModuleUndefined, finding.SeverityNote
		f.Message += " — supplied by the loading program by design (" + ev.Source + ")"
	default:
		f.Rule, f.Severity = finding.RuleModuleUndefined, finding.SeverityNote
		f.Message += " — a loadable module (no SONAME, NEEDED by nothing in the scan): the program that loads it may define it"
	}
}

// loadedByPath finds the library of the scan whose SONAME is lib, and a
// file of the scan near it and e (under their common directory) that
// loads it by path with dlopen(): the JDK launcher's libjli loads
// "%s/lib/%s/libjvm.so", and the libraries that NEED libjvm.so, loaded
// after it, find it loaded. A name dlopen() would search for is no such
// evidence: it fails as NEEDED does.
func (w *wide) loadedByPath(e *elfScan, lib string) (l *elfScan, by string) {
	for _, c := range w.all {
		if c.library && c.soname == lib {
			l = c
			break
		}
	}
	if l == nil {
		return nil, ""
	}
	root := filepath.Dir(e.path)
	for !strings.HasPrefix(l.path, root+"/") {
		root = filepath.Dir(root)
	}
	if strings.Count(root, "/") < 3 {
		return nil, "" // (a whole system tree: too far to be one package)
	}
	for _, c := range w.all {
		if !strings.HasPrefix(c.path, root+"/") || c == l {
			continue
		}
		if slices.Contains(w.pathNames(c), lib) {
			return l, c.path
		}
	}
	return nil, ""
}

// pathNames is c's DlopenPathNames when it calls dlopen(), read once.
func (w *wide) pathNames(c *elfScan) []string {
	if names, ok := w.dlopenPaths[c.id]; ok {
		return names
	}
	var names []string
	if t := w.table(c); t != nil && t.Symbols().CallsDlopen() {
		if f, err := elfx.Open(c.path); err == nil {
			names, _ = f.DlopenPathNames()
			f.Close()
		}
	}
	w.dlopenPaths[c.id] = names
	return names
}

// loadedWith finds a program of the scan whose process loads e and finds
// the library named lib on the way (through the program's own search
// path, after which the loader reuses it for e).
func (w *wide) loadedWith(e *elfScan, lib string) *elfScan {
	for _, p := range w.all {
		if p.program && p.closure[e.id] && !slices.Contains(p.missing, lib) {
			return p
		}
	}
	return nil
}

// sameFile reports whether path names the file id.
func sameFile(path string, id elfx.FileID) bool {
	return path != "" && statID(path) == id
}
