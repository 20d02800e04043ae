// Package finding is the vocabulary every check of rocmdoctor reports in:
// a Finding (rule, severity, file, message, fix and the evidence), its
// Severity, and the rule table (rules.go), where every RD rule ID, name,
// default severity and fix is defined once.
package finding

import (
	"fmt"
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// Severity orders findings for --fail-on.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityNote    Severity = "note"
	// SeverityOff disables a rule (check's configuration).
	SeverityOff Severity = "off"
)

// AtLeast reports whether s is at or above threshold ("error", "warning",
// "note"; "never" matches nothing).
func (s Severity) AtLeast(threshold string) bool {
	rank := map[string]int{"note": 1, "warning": 2, "error": 3}
	t, ok := rank[threshold]
	if !ok {
		return false
	}
	return rank[string(s)] >= t
}

// CountAtLeast counts the findings at or above threshold (see
// [Severity.AtLeast]).
func CountAtLeast(findings []Finding, threshold string) int {
	n := 0
	for _, f := range findings {
		if f.Severity.AtLeast(threshold) {
			n++
		}
	}
	return n
}

// ParseSeverity parses a severity name for configuration.
func ParseSeverity(s string) (Severity, error) {
	switch v := Severity(strings.ToLower(s)); v {
	case SeverityError, SeverityWarning, SeverityNote, SeverityOff:
		return v, nil
	}
	return "", fmt.Errorf("severity must be error, warning, note or off, not %q", s)
}

// Finding is one problem with the evidence and the fix.
type Finding struct {
	// ID is the check rule ID ("RD1001"), set by Check.
	ID       string   `json:"id,omitempty"`
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	File     string   `json:"file"` // the object with the reference
	// RelPath is File relative to the scanned root (Check only).
	RelPath   string `json:"rel_path,omitempty"`
	Symbol    string `json:"symbol,omitempty"`
	Demangled string `json:"demangled,omitempty"`
	Version   string `json:"version,omitempty"` // required version
	Library   string `json:"library,omitempty"` // vn_file or the NEEDED name
	Message   string `json:"message"`
	Fix       string `json:"fix,omitempty"`
	// ReferencedBy lists archive members or objects that reference the
	// symbol (link-input mode).
	ReferencedBy []string `json:"referenced_by,omitempty"`
	// DefinedWith lists the versions the symbol is defined with elsewhere
	// in the closure (version mismatches).
	DefinedWith []string `json:"defined_with,omitempty"`
	// Providers are definitions found by --index.
	Providers []Provider `json:"providers,omitempty"`
	// Unresolved lists, on a missing-library finding, the undefined
	// symbols (name@VERSION) that File expects from that library by its
	// version requirements and that no loaded object defines. The missing
	// library is their cause, so they are reported here, sorted, instead
	// of as one undefined-symbol finding each (ldd -r lists them one by
	// one). Unversioned references cannot be attributed and stay
	// undefined-symbol findings.
	Unresolved []string `json:"unresolved_symbols,omitempty"`
	// Evidence, on a finding the rest of the scan lowered from an error
	// (check), is what decided it.
	Evidence *Evidence `json:"evidence,omitempty"`
}

// Provider is a place in an indexed tree that defines a symbol.
type Provider struct {
	File      string `json:"file"`             // archive, shared library or object
	Member    string `json:"member,omitempty"` // archive member
	InClosure bool   `json:"in_closure"`       // the file is already among the inputs or loaded objects
	// Note says what kind of provider it is when that matters: a
	// "sanitizer or profiling runtime" (no answer to the link, listed
	// after the others), "toolchain" (a C/C++ runtime library the compiler
	// driver links), "system library" (in the system's library
	// directories).
	Note string `json:"note,omitempty"`
}

func (p Provider) String() string {
	if p.Member != "" {
		return p.File + "(" + p.Member + ")"
	}
	return p.File
}

// Evidence says what in the scan decided the severity of a finding that
// the file alone would make an error: how the file is used, and by what.
type Evidence struct {
	// Kind is "module" (no SONAME and NEEDED by nothing in the scan: only
	// dlopen() loads it), "host-program" (a program in the scan exports
	// every name the file misses), "by-design" (an interface the loading
	// program supplies, from a cited table), "underlinked" (libraries in
	// the scan that the file does not NEED define the names) or
	// "program-context" (a program in the scan loads the file and the
	// missing library through its own search path).
	Kind      string   `json:"kind"`
	Program   string   `json:"program,omitempty"`
	Libraries []string `json:"libraries,omitempty"`
	Source    string   `json:"source,omitempty"` // the citation of a by-design interface
}

// Fingerprint identifies a finding across runs for baselines: rule, file
// (relative to its scan root), symbol, library and version.
func (f Finding) Fingerprint() string {
	return strings.Join([]string{f.ID, f.RelPath, f.Symbol, f.Library, f.Version}, "|")
}

// Demangle returns the demangled C++ or Rust name, or "" when name is not
// mangled.
func Demangle(name string) string {
	if !strings.HasPrefix(name, "_Z") && !strings.HasPrefix(name, "_R") && !strings.HasPrefix(name, "__Z") {
		return ""
	}
	s, err := demangle.ToString(name)
	if err != nil || s == name {
		return ""
	}
	return s
}
