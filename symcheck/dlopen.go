package symcheck

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// dlopenFacts are what a file says about the libraries it loads with
// dlopen(): its ELF dlopen metadata notes (always read: they sit in the
// note segment at the start of the file) and, when the scan asks for
// them, the library names in its read-only data.
type dlopenFacts struct {
	notes    []elfx.DlopenDep
	notesErr error
	names    []string // nil unless read (CheckOptions.DlopenStrings)
}

// callsDlopen reports whether t's file references dlopen or dlmopen.
func callsDlopen(t *elfx.SymbolTable) bool {
	return t != nil && len(t.UndefinedNamed("dlopen", "dlmopen")) > 0
}

// dlopenFindings are the dlopen() rules for the file at path, the root of
// res: RD1009 for a note that is not valid, RD1008 for a declared library
// dlopen() from the file would not find (severity by the note's priority),
// RD1010 for a library its read-only data names that it would not find.
func dlopenFindings(r *rpath.Resolver, res *rpath.Result, path string, df *dlopenFacts) []Finding {
	var out []Finding
	if df.notesErr != nil {
		info, _ := LookupRule(RuleDlopenNoteInvalid)
		out = append(out, Finding{Rule: RuleDlopenNoteInvalid, Severity: info.Severity, File: path, Fix: info.Fix,
			Message: df.notesErr.Error() + "; package-notes' dlopen-notes.py (rpm's and debhelper's dependency generator) fails on the file or drops the note"})
	}
	info, _ := LookupRule(RuleDlopenMissing)
	for _, d := range df.notes {
		first, found := lookupAny(r, res, d.Sonames)
		if found {
			continue
		}
		sev := map[string]Severity{elfx.DlopenRequired: SeverityError, elfx.DlopenRecommended: SeverityWarning, elfx.DlopenSuggested: SeverityNote}[d.Priority]
		what := fmt.Sprintf("%s priority", d.Priority)
		if d.Feature != "" {
			what = fmt.Sprintf("feature %q, %s", d.Feature, what)
		}
		msg := fmt.Sprintf("%s declares in its .note.dlopen (at offset 0x%x; %s) that it loads %s with dlopen(), and dlopen() from it would find %s",
			path, d.Offset, what, orList(d.Sonames), noneOf(d.Sonames))
		out = append(out, Finding{Rule: RuleDlopenMissing, Severity: sev, File: path, Library: d.Sonames[0],
			Message: msg + rejectedText(first), Fix: info.Fix})
	}
	if len(df.names) == 0 {
		return out
	}
	info, _ = LookupRule(RuleDlopenNameMissing)
	own := map[string]bool{libStem(filepath.Base(path)): true}
	if s := res.Root.Soname; s != "" {
		own[libStem(s)] = true
	}
	var stems []string
	byStem := map[string][]string{}
	for _, n := range df.names {
		s := libStem(n)
		if own[s] {
			continue
		}
		if _, ok := byStem[s]; !ok {
			stems = append(stems, s)
		}
		byStem[s] = append(byStem[s], n)
	}
	for _, s := range stems {
		names := byStem[s]
		first, found := lookupAny(r, res, names)
		if found {
			continue
		}
		msg := fmt.Sprintf("%s calls dlopen() and names %s in its read-only data; dlopen() from it would find %s",
			path, andList(names), noneOf(names))
		out = append(out, Finding{Rule: RuleDlopenNameMissing, Severity: info.Severity, File: path, Library: names[0],
			Message: msg + rejectedText(first), Fix: info.Fix})
	}
	return out
}

// lookupAny looks names up, in order, as dlopen() from res's root would;
// found says one was found, first is the first one's search otherwise.
func lookupAny(r *rpath.Resolver, res *rpath.Result, names []string) (first *rpath.Dep, found bool) {
	for _, n := range names {
		d := r.Lookup(res, res.Root, n)
		if !d.Missing() {
			return nil, true
		}
		if first == nil {
			first = d
		}
	}
	return first, false
}

// libStem is a library name up to ".so": libcrypto for libcrypto.so.3.
func libStem(name string) string {
	if i := strings.Index(name, ".so"); i > 0 {
		return name[:i]
	}
	return name
}

func orList(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func andList(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func noneOf(names []string) string {
	if len(names) == 1 {
		return "no " + names[0]
	}
	return "none of them"
}

// rejectedText names the candidates d's search rejected, and where the
// loader stopped; "" when it found no file of that name at all.
func rejectedText(d *rpath.Dep) string {
	if d == nil {
		return ""
	}
	var rej []string
	for _, a := range d.Rejected {
		if a.Stops {
			rej = append(rej, a.Path+": "+a.Result+" (the loader stops there)")
			continue
		}
		rej = append(rej, a.Path+": "+strings.TrimPrefix(a.Result, "skipped: "))
	}
	if len(rej) == 0 {
		return ""
	}
	return " (" + d.Name + ": rejected " + strings.Join(rej, "; ") + ")"
}
