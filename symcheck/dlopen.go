package symcheck

import (
	"fmt"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// DlopenFacts are what a file says about the libraries it loads with
// dlopen(): its ELF dlopen metadata notes (elfx.File.DlopenNotes: they sit
// in the note segment at the start of the file) and, when asked for, the
// library names in its read-only data (elfx.File.DlopenNames).
type DlopenFacts struct {
	Notes    []elfx.DlopenDep
	NotesErr error    // the notes could not be read
	Names    []string // nil unless read
}

// DlopenFindings are the dlopen() rules for the file at path, the root of
// res: RD1009 for a note that is not valid, RD1008 for a declared library
// dlopen() from the file would not find (severity by the note's priority),
// RD1010 for a library its read-only data names that it would not find.
func DlopenFindings(r *rpath.Resolver, res *rpath.Result, path string, df *DlopenFacts) []finding.Finding {
	var out []finding.Finding
	if df.NotesErr != nil {
		info, _ := finding.LookupRule(finding.RuleDlopenNoteInvalid)
		out = append(out, finding.Finding{Rule: finding.RuleDlopenNoteInvalid, Severity: info.Severity, File: path, Fix: info.Fix,
			Message: df.NotesErr.Error() + "; package-notes' dlopen-notes.py (rpm's and debhelper's dependency generator) fails on the file or drops the note"})
	}
	for _, l := range r.LookupDlopen(res, res.Root, df.Notes, df.Names) {
		if !l.Missing() {
			continue
		}
		var msg string
		info, _ := finding.LookupRule(finding.RuleDlopenNameMissing)
		sev := info.Severity
		if l.Source == "note" {
			// The rule's default severity is a recommended library's.
			info, _ = finding.LookupRule(finding.RuleDlopenMissing)
			sev = info.Severity
			if s, ok := map[string]finding.Severity{elfx.DlopenRequired: finding.SeverityError, elfx.DlopenSuggested: finding.SeverityNote}[l.Priority]; ok {
				sev = s
			}
			what := fmt.Sprintf("%s priority", l.Priority)
			if l.Feature != "" {
				what = fmt.Sprintf("feature %q, %s", l.Feature, what)
			}
			msg = fmt.Sprintf("%s declares in its .note.dlopen (at offset 0x%x; %s) that it loads %s with dlopen(), and dlopen() from it would find %s",
				path, l.Offset, what, orList(l.Names), noneOf(l.Names))
		} else {
			msg = fmt.Sprintf("%s calls dlopen() and names %s in its read-only data; dlopen() from it would find %s",
				path, andList(l.Names), noneOf(l.Names))
		}
		out = append(out, finding.Finding{Rule: info.Name, Severity: sev, File: path, Library: l.Names[0],
			Message: msg + rejectedText(l.Dep), Fix: info.Fix})
	}
	return out
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
