package rpath

import (
	"path/filepath"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
)

// DlopenLoad is a library an object loads with dlopen(), which no NEEDED
// entry records, and where dlopen() called from the object finds it.
type DlopenLoad struct {
	// Names are the alternatives (a note's sonames in order, or the names
	// of one stem found in the object's read-only data): any one will do.
	Names []string `json:"names"`
	// Source is "note" (declared in the object's .note.dlopen) or
	// "string" (a name in its read-only data; the object calls dlopen()).
	Source string `json:"source"`
	// Feature, Priority and Offset are the note's (Source "note").
	Feature  string `json:"feature,omitempty"`
	Priority string `json:"priority,omitempty"`
	Offset   int64  `json:"offset,omitempty"`
	// Dep is where the first alternative that resolves was found, or,
	// when none does, the search for the first one (Missing).
	Dep *Dep `json:"dep"`
}

// Missing reports whether dlopen() would find none of the names.
func (l *DlopenLoad) Missing() bool { return l.Dep.Missing() }

// LookupDlopen looks up, as dlopen() called from obj in the process res
// describes would (Lookup), the libraries obj declares in its dlopen
// metadata notes and, when names is not nil, those of the library names in
// its read-only data (elfx.File.DlopenNames) that it loads: names of one
// stem (libcrypto.so.3, libcrypto.so.1.1, libcrypto.so) are taken as
// alternatives, and names of obj's own stem (its SONAME's or file name's)
// and names a note declares are passed over. res is not changed.
func (r *Resolver) LookupDlopen(res *Result, obj *Object, notes []elfx.DlopenDep, names []string) []DlopenLoad {
	var out []DlopenLoad
	declared := map[string]bool{}
	for _, d := range notes {
		for _, n := range d.Sonames {
			declared[n] = true
		}
		out = append(out, DlopenLoad{Names: d.Sonames, Source: "note", Feature: d.Feature, Priority: d.Priority, Offset: d.Offset,
			Dep: r.lookupAny(res, obj, d.Sonames)})
	}
	own := map[string]bool{LibStem(filepath.Base(obj.Path)): true}
	if obj.Soname != "" {
		own[LibStem(obj.Soname)] = true
	}
	var stems []string
	byStem := map[string][]string{}
	for _, n := range names {
		s := LibStem(filepath.Base(n)) // an absolute path is an alternative to its name
		if own[s] || declared[n] {
			continue
		}
		if _, ok := byStem[s]; !ok {
			stems = append(stems, s)
		}
		byStem[s] = append(byStem[s], n)
	}
	for _, s := range stems {
		out = append(out, DlopenLoad{Names: byStem[s], Source: "string", Dep: r.lookupAny(res, obj, byStem[s])})
	}
	return out
}

// lookupAny is the first of names found from obj, else the search for
// the first one.
func (r *Resolver) lookupAny(res *Result, obj *Object, names []string) *Dep {
	var first *Dep
	for _, n := range names {
		d := r.Lookup(res, obj, n)
		if !d.Missing() {
			return d
		}
		if first == nil {
			first = d
		}
	}
	return first
}

// DlopenLoads reads what the root of res loads with dlopen() from its file
// — its dlopen metadata notes and, with names set and when it calls
// dlopen() or dlmopen(), the library names in its read-only data — and
// looks them up (LookupDlopen). A note that does not follow the
// specification is returned as the error, with the loads of the others.
func (r *Resolver) DlopenLoads(res *Result, names bool) ([]DlopenLoad, error) {
	f, err := elfx.Open(res.Root.FilePath())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	notes, noteErr := f.DlopenNotes()
	var strs []string
	if names {
		if t, err := f.DynamicSymbolTable(); err == nil && t.CallsDlopen() {
			if strs, err = f.DlopenNames(); err != nil {
				return nil, err
			}
		}
	}
	return r.LookupDlopen(res, res.Root, notes, strs), noteErr
}

// LibStem is a library name up to ".so": libcrypto for libcrypto.so.3.
func LibStem(name string) string {
	if i := strings.Index(name, ".so"); i > 0 {
		return name[:i]
	}
	return name
}
