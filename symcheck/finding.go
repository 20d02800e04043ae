// Package symcheck turns what elfx reads and rpath resolves into findings,
// each with its evidence and a fix. At its core is the Binder, which binds
// dynamic symbols and versions the way ld.so does. On it rest:
//
//   - Symbols: undefined symbols of a file (bound in its closure, or in a
//     program with BindInHost) or of a set of objects and archives, where a
//     definition exists in a build tree (--index), and what an
//     LLVMInitialize* gap means (DiagnoseLLVM, with the link set);
//   - CheckUnwind, CheckLinkInputs, ParseLinkLine: unwinders in a process
//     and on a link line;
//   - CheckCK: a composable_kernel install against its consumers;
//   - GPUs: which GPUs a build's device code and Tensile kernels cover;
//   - Prefix: whether a ROCm install is consistent;
//   - Check: the gate over a tree, which runs all of them with the hygiene
//     rules, lets the rest of the scan decide how a file is used
//     (evidence.go), and reports by rule ID (rules.go) as JSON, SARIF or
//     JUnit, with configuration files and baselines.
package symcheck

import (
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// Severity orders findings for --fail-on.
type Severity string

const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityNote    Severity = "note"
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

// Rule identifiers of the findings this package produces.
const (
	RuleMissingLibrary     = "missing-library"
	RuleMissingInterpreter = "missing-interpreter"
	RuleUndefinedSymbol    = "undefined-symbol"
	RuleModuleUndefined    = "module-undefined-symbol"
	RuleUnderlinked        = "underlinked-symbol"
	RuleProgramContext     = "program-context-library"
	RuleVersionMismatch    = "symbol-version-mismatch"
	RuleMissingVersion     = "missing-version-node"
	RuleUnresolvedStatic   = "unresolved-in-inputs"
	RuleIncompatibleInput  = "incompatible-link-input"
	RuleMultipleUnwinders  = "multiple-unwinders"
	RuleUnwinderFlavour    = "unwinder-flavour-mismatch"
	RuleUnwinderMachine    = "unwinder-wrong-machine"
	RuleExportsUnwinder    = "exports-unwinder"
	RuleGPUTargetMissing   = "gpu-target-missing"
	RuleTensileMissing     = "tensile-kernels-missing"
	RuleDeviceCodeUnread   = "device-code-unreadable"
	RuleGPUTargetsDiffer   = "gpu-targets-differ"
)

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
