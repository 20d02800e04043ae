package symcheck

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// Unwinder flavours, told apart by what they export (not by file name).
const (
	FlavourLLVM    = "llvm-libunwind"   // libunwind.so.1: __unw_*/unw_* and unversioned _Unwind_*
	FlavourNonGNU  = "nongnu-libunwind" // libunwind.so.8: _U<arch>_* (and unversioned _Unwind_*)
	FlavourLibgcc  = "libgcc_s"         // _Unwind_*@GCC_3.0
	FlavourUnknown = "unknown"          // exports _Unwind_* but none of the signatures
)

// Unwinder is an object of a closure that exports the unwinding ABI.
type Unwinder struct {
	Path    string `json:"path"`
	Soname  string `json:"soname,omitempty"`
	Flavour string `json:"flavour"`
	Machine string `json:"machine"`
	// Static is set when the object is not an unwinder library but carries
	// (and exports) a statically linked copy.
	Static bool `json:"static_copy,omitempty"`
	// BoundBy lists the objects whose _Unwind_RaiseException/_Unwind_Resume
	// references bind to this unwinder.
	BoundBy []string `json:"bound_by,omitempty"`
	// PulledInBy names the object whose NEEDED entry loaded it (none for
	// the file checked itself).
	PulledInBy []string `json:"pulled_in_by,omitempty"`
}

var unwindABI = []string{"_Unwind_RaiseException", "_Unwind_Resume"}

// classifyUnwinder reports the flavour of an object that exports the
// unwinding ABI, or "" when it exports none of it. Sanitizer interceptors
// (see [isInterceptor]) do not count.
func classifyUnwinder(t *Table) string {
	fl, _ := t.unwinder()
	return fl
}

// unwinderOf is classifyUnwinder, and also reports whether the object
// defines part of the unwinding ABI through a sanitizer interceptor. For
// an object that is no unwinder, that means every such definition is one:
// references that bind to it go on to the next provider in load order.
func unwinderOf(t *Table) (flavour string, intercepts bool) {
	exports := false
	versioned := false
	for _, n := range unwindABI {
		for _, d := range t.definitions(n) {
			if isInterceptor(t, n, d) {
				intercepts = true
				continue
			}
			exports = true
			versioned = versioned || d.Version == "GCC_3.0"
		}
	}
	if !exports {
		return "", intercepts
	}
	switch {
	case len(t.tab.DefinedWithPrefix("__unw_")) > 0 || len(t.definitions("unw_step")) > 0:
		return FlavourLLVM, intercepts
	case len(t.tab.DefinedWithPrefix("_Ux86_64_")) > 0 || len(t.tab.DefinedWithPrefix("_ULx86_64_")) > 0 ||
		len(t.tab.DefinedWithPrefix("_Uaarch64_")) > 0 || len(t.tab.DefinedWithPrefix("_Ux86_")) > 0:
		return FlavourNonGNU, intercepts
	case versioned:
		return FlavourLibgcc, intercepts
	}
	return FlavourUnknown, intercepts
}

// isInterceptor reports whether the definition d of name is a sanitizer
// runtime's interceptor, which forwards to the real unwinder found with
// dlsym(RTLD_NEXT): such an object imports the unwinder; it is not one.
// GCC's libasan and compiler-rt up to LLVM 16 define _Unwind_RaiseException
// as a weak alias of __interceptor__Unwind_RaiseException; from LLVM 17 it
// is a weak alias of __interceptor_trampoline__Unwind_RaiseException, a
// jump to ___interceptor__Unwind_RaiseException (which the public name
// aliases directly where a target has no trampolines).
func isInterceptor(t *Table, name string, d elfx.Symbol) bool {
	for _, prefix := range []string{"__interceptor_", "__interceptor_trampoline_", "___interceptor_"} {
		for _, a := range t.definitions(prefix + name) {
			if a.Value == d.Value {
				return true
			}
		}
	}
	return false
}

// isUnwinderLibrary reports whether an object is meant to provide the
// unwinder (by SONAME), as opposed to carrying a copy.
func isUnwinderLibrary(soname, path string) bool {
	n := soname
	if n == "" {
		n = path[strings.LastIndex(path, "/")+1:]
	}
	return strings.HasPrefix(n, "libunwind") || strings.HasPrefix(n, "libgcc_s") || strings.HasPrefix(n, "libgcc_eh") ||
		strings.HasPrefix(n, "libc++abi")
}

// UnwindResult is the outcome of CheckUnwind for one file.
type UnwindResult struct {
	File      string            `json:"file"`
	Unwinders []Unwinder        `json:"unwinders"`
	Findings  []finding.Finding `json:"findings"`
	// Error says why the file could not be checked (it begins with the
	// path); the other fields are empty then.
	Error string `json:"error,omitempty"`
}

// CheckUnwind resolves path's closure and reports the unwinders in it and
// the problems they cause: two providers of the unwinding ABI in one
// process, a NEEDED libunwind.so.1/.so.8 that resolves to the other
// flavour, an unwinder candidate of the wrong machine, and libraries that
// export _Unwind_* they should only import.
func (b *Binder) CheckUnwind(ctx context.Context, path string) (*UnwindResult, error) {
	res, err := b.resolver.Resolve(ctx, path)
	if err != nil {
		return nil, err
	}
	return b.UnwindFindings(res, path, true)
}

// UnwindFindings is CheckUnwind for a resolved closure. Which objects
// bind to each unwinder (Unwinder.BoundBy) is worked out when boundBy is
// set, and otherwise only when there are two or more unwinders (for the
// finding that names them): check has no use for it with one, and the
// lookups across the closure were a twentieth of its time.
func (b *Binder) UnwindFindings(res *rpath.Result, path string, boundBy bool) (*UnwindResult, error) {
	tabs, err := b.loadTables(res.Objects)
	if err != nil {
		return nil, err
	}
	out := &UnwindResult{File: path, Unwinders: []Unwinder{}, Findings: []finding.Finding{}}
	byPath := map[string]int{}
	forwards := map[string]bool{} // objects whose _Unwind_* are interceptors only
	for i, o := range res.Objects {
		fl, intercepts := tabs[i].unwinder()
		if fl == "" {
			forwards[o.Path] = intercepts
			continue
		}
		byPath[o.Path] = len(out.Unwinders)
		out.Unwinders = append(out.Unwinders, Unwinder{Path: o.Path, Soname: o.Soname, Flavour: fl,
			Machine: elfx.MachineName(o.Header.Machine), Static: !isUnwinderLibrary(o.Soname, o.Path)})
	}
	// Who loaded each: the object whose NEEDED entry brought it in.
	for _, o := range res.Objects {
		if u, ok := byPath[o.Path]; ok && o.Loader != nil {
			out.Unwinders[u].PulledInBy = []string{o.Loader.Path}
		}
	}
	if boundBy || len(out.Unwinders) > 1 {
		out.boundBy(res, tabs, byPath, forwards)
	}
	if len(out.Unwinders) > 1 {
		out.Findings = append(out.Findings, out.multiple(path))
	}
	out.Findings = append(out.Findings, out.dependencies(res, byPath)...)
	for _, u := range out.Unwinders {
		if u.Static {
			out.Findings = append(out.Findings, finding.Finding{
				Rule: finding.RuleExportsUnwinder, Severity: finding.SeverityWarning, File: u.Path, Symbol: "_Unwind_RaiseException",
				Message: fmt.Sprintf("%s exports _Unwind_* from a statically linked %s copy; every process that loads it gets a second unwinder", u.Path, u.Flavour),
				Fix:     "link the unwinder dynamically, or hide it (-Wl,--exclude-libs,ALL or a version script with local: _Unwind_*)",
			})
		}
	}
	sort.SliceStable(out.Findings, func(i, j int) bool { return out.Findings[i].Rule < out.Findings[j].Rule })
	return out, nil
}

// boundBy works out which objects bind to each unwinder, in load order
// like ld.so (an interceptor passes its callers on to the next provider).
func (out *UnwindResult) boundBy(res *rpath.Result, tabs []*Table, byPath map[string]int, forwards map[string]bool) {
	for i, o := range res.Objects {
		for _, u := range tabs[i].unwindReferences() {
			k := elfx.NewKey(u.Name)
			for j, p := range res.Objects {
				if ok, _ := tabs[j].tab.Binds(&k, u.Version); ok {
					if forwards[p.Path] {
						continue // the interceptor calls the next provider
					}
					if u, ok := byPath[p.Path]; ok {
						out.Unwinders[u].BoundBy = appendUnique(out.Unwinders[u].BoundBy, o.Path)
					}
					break
				}
			}
		}
	}
}

// multiple is the finding for two or more unwinders in the process of
// path: an error when references reach two of them (or one is a static
// copy), a note when all bind to one.
func (out *UnwindResult) multiple(path string) finding.Finding {
	var parts []string
	for _, u := range out.Unwinders {
		s := fmt.Sprintf("%s (%s", u.Path, u.Flavour)
		if u.Static {
			s += ", static copy"
		}
		s += ")"
		if len(u.PulledInBy) > 0 {
			s += " loaded for " + strings.Join(u.PulledInBy, ", ") + ","
		}
		if len(u.BoundBy) > 0 {
			s += " used by " + strings.Join(u.BoundBy, ", ")
		} else {
			s += " used by nothing (the first provider in load order wins)"
		}
		parts = append(parts, s)
	}
	fd := finding.Finding{
		Rule: finding.RuleMultipleUnwinders, Severity: finding.SeverityError, File: path, Symbol: "_Unwind_RaiseException",
		Message: fmt.Sprintf("%d providers of the unwinding ABI in one process: %s; exceptions thrown through frames registered with one and caught with the other crash",
			len(out.Unwinders), strings.Join(parts, "; ")),
		Fix: "link every component against one unwinder (all libgcc_s, or all LLVM libunwind via -unwindlib=libunwind); rebuild the odd one out",
	}
	// Only references crossing to a second provider make the crash:
	// with every one bound to the same library, the others lie idle.
	// A static copy's own calls bind inside its object, where the
	// dynamic bindings do not show them.
	bound, static := 0, false
	for _, u := range out.Unwinders {
		if len(u.BoundBy) > 0 {
			bound++
		}
		static = static || u.Static
	}
	if bound < 2 && !static {
		fd.Severity = finding.SeverityNote
		fd.Message = fmt.Sprintf("%d providers of the unwinding ABI in one process, but every reference to it binds to one: %s; no exception crosses between them",
			len(out.Unwinders), strings.Join(parts, "; "))
		fd.Fix = "none needed now; linking every component against one unwinder keeps it so"
	}
	return fd
}

// dependencies are the findings about how objects reach their unwinder:
// a foreign-architecture candidate skipped (RD1102), and a libunwind
// NEEDED entry resolved to the other flavour (RD1103).
func (out *UnwindResult) dependencies(res *rpath.Result, byPath map[string]int) []finding.Finding {
	var fs []finding.Finding
	for _, o := range res.Objects {
		for _, d := range o.Deps {
			if !strings.HasPrefix(d.Name, "libunwind.so.") && !strings.HasPrefix(d.Name, "libgcc_s.so.") {
				continue
			}
			for _, r := range d.Rejected {
				fs = append(fs, finding.Finding{
					Rule: finding.RuleUnwinderMachine, Severity: finding.SeverityWarning, File: o.Path, Library: d.Name,
					Message: fmt.Sprintf("%s needs %s; %s was skipped: %s", o.Path, d.Name, r.Path, strings.TrimPrefix(r.Result, "skipped: ")),
					Fix:     "remove the directory with the foreign-architecture unwinder from the search path (RUNPATH, LD_LIBRARY_PATH, -L)",
				})
			}
			if d.Object == nil {
				continue
			}
			u, ok := byPath[d.Object.Path]
			if !ok {
				continue
			}
			want := ""
			switch d.Name {
			case "libunwind.so.1":
				want = FlavourLLVM
			case "libunwind.so.8":
				want = FlavourNonGNU
			}
			if got := out.Unwinders[u].Flavour; want != "" && got != want {
				fs = append(fs, finding.Finding{
					Rule: finding.RuleUnwinderFlavour, Severity: finding.SeverityError, File: o.Path, Library: d.Name,
					Message: fmt.Sprintf("%s needs %s (%s) but it resolves to %s, which is %s", o.Path, d.Name, want, d.Object.Path, got),
					Fix:     fmt.Sprintf("install the %s build of %s, or fix the search path so the right one comes first", want, d.Name),
				})
			}
		}
	}
	return fs
}

func appendUnique(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// CheckUnwindFiles runs CheckUnwind for each path with one resolver. A
// path that cannot be checked (missing, not an ELF file, malformed) is a
// result with its Error, and the others are still checked; the error
// returned is the context's only.
func CheckUnwindFiles(ctx context.Context, paths []string, opts rpath.Options) ([]*UnwindResult, error) {
	b := NewBinder(rpath.New(opts))
	var out []*UnwindResult
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		r, err := b.CheckUnwind(ctx, p)
		if err != nil {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			r = &UnwindResult{File: p, Unwinders: []Unwinder{}, Findings: []finding.Finding{}, Error: finding.PathErr(p, err).Error()}
		}
		out = append(out, r)
	}
	return out, nil
}
