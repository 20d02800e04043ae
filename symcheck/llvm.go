package symcheck

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// llvmComponents maps the suffix of an LLVMInitialize<Target><Component>
// function to the LLVM library (LLVM<Target><Lib>) that defines it, longest
// suffix first so that "TargetInfo" wins over "Target".
var llvmComponents = []struct{ suffix, lib string }{
	{"TargetInfo", "Info"},
	{"TargetMCA", "TargetMCA"},
	{"TargetMC", "Desc"},
	{"AsmPrinter", "CodeGen"},
	{"AsmParser", "AsmParser"},
	{"Disassembler", "Disassembler"},
	{"Target", "CodeGen"},
}

// llvmDisplayOrder is the order components are reported in.
var llvmDisplayOrder = []string{"TargetInfo", "Target", "TargetMC", "AsmPrinter", "AsmParser", "Disassembler", "TargetMCA"}

// ParseLLVMInitializer splits "LLVMInitializeX86TargetMC" into target
// "X86" and component "TargetMC". ok is false for other names, including
// non-target initialisers such as LLVMInitializeCore.
func ParseLLVMInitializer(name string) (target, component string, ok bool) {
	rest, found := strings.CutPrefix(name, "LLVMInitialize")
	if !found {
		return "", "", false
	}
	for _, c := range llvmComponents {
		if t, found := strings.CutSuffix(rest, c.suffix); found && t != "" && t[0] >= 'A' && t[0] <= 'Z' {
			return t, c.suffix, true
		}
	}
	return "", "", false
}

// LLVMLibrary is the LLVM library that defines target's component, e.g.
// ("X86", "TargetMC") → "LLVMX86Desc".
func LLVMLibrary(target, component string) string {
	for _, c := range llvmComponents {
		if c.suffix == component {
			return "LLVM" + target + c.lib
		}
	}
	return ""
}

// LLVMTarget is one LLVM target whose initialisers are referenced but not
// (all) defined.
type LLVMTarget struct {
	Target    string   `json:"target"`
	Missing   []string `json:"missing"`   // components referenced and not defined
	Libraries []string `json:"libraries"` // LLVM libraries to link for them
	// FoundIn lists, per library, where --index found it.
	FoundIn []string `json:"found_in,omitempty"`
}

// LLVMDiagnosis explains LLVMInitialize* symbols left unresolved.
type LLVMDiagnosis struct {
	Missing []LLVMTarget `json:"missing_targets"`
	// LinkSet, with --index, is every LLVM library a link of the missing
	// ones needs (their own dependencies, found to a fixed point in the
	// index's archives), in a working link order.
	LinkSet []string `json:"link_set,omitempty"`
	// LinkGroup says some of LinkSet need each other: they link as one
	// group (--start-group … --end-group), not in one pass.
	LinkGroup bool `json:"link_group,omitempty"`
	// Linked are targets whose referenced initialisers are all defined.
	Linked  []string `json:"linked_targets,omitempty"`
	Message string   `json:"message"`
	Fix     string   `json:"fix"`
}

// llvmTargets are LLVM's target names (LLVM_ALL_TARGETS and experimental
// ones), used to find which targets a closure does link.
var llvmTargets = []string{"AArch64", "AMDGPU", "ARC", "ARM", "AVR", "BPF", "CSKY", "DirectX", "Hexagon", "Lanai",
	"LoongArch", "M68k", "MSP430", "Mips", "NVPTX", "PowerPC", "RISCV", "SPIRV", "Sparc", "SystemZ", "VE",
	"WebAssembly", "X86", "XCore", "Xtensa"}

// DiagnoseLLVM groups unresolved LLVMInitialize* names by target and
// component. defined reports whether a name is defined in the closure or
// inputs; idx (may be nil) locates the libraries.
func DiagnoseLLVM(unresolved []string, defined func(string) bool, idx *Index) *LLVMDiagnosis {
	missing := map[string]map[string]bool{}
	for _, n := range unresolved {
		if t, c, ok := ParseLLVMInitializer(n); ok {
			if missing[t] == nil {
				missing[t] = map[string]bool{}
			}
			missing[t][c] = true
		}
	}
	if len(missing) == 0 {
		return nil
	}
	linked := map[string]bool{}
	for _, t := range llvmTargets {
		if missing[t] != nil {
			continue
		}
		for _, c := range llvmDisplayOrder {
			if defined("LLVMInitialize" + t + c) {
				linked[t] = true
				break
			}
		}
	}
	d := &LLVMDiagnosis{}
	var targets []string
	for t := range missing {
		targets = append(targets, t)
	}
	sort.Strings(targets)
	var msgs, libsAll []string
	for _, t := range targets {
		lt := LLVMTarget{Target: t}
		seen := map[string]bool{}
		for _, c := range llvmDisplayOrder {
			if !missing[t][c] {
				continue
			}
			lt.Missing = append(lt.Missing, c)
			lib := LLVMLibrary(t, c)
			if !seen[lib] {
				seen[lib] = true
				lt.Libraries = append(lt.Libraries, lib)
			}
		}
		for _, lib := range lt.Libraries {
			for _, c := range lt.Missing {
				if LLVMLibrary(t, c) != lib {
					continue
				}
				for _, p := range idx.Providers("LLVMInitialize" + t + c) {
					lt.FoundIn = append(lt.FoundIn, p.String())
				}
				break
			}
		}
		lt.FoundIn = dedupe(lt.FoundIn)
		d.Missing = append(d.Missing, lt)
		m := fmt.Sprintf("LLVM target %s is referenced but not linked: missing %s — link %s",
			t, strings.Join(lt.Missing, ", "), strings.Join(lt.Libraries, ", "))
		if len(lt.FoundIn) > 0 {
			m += " (found in " + strings.Join(lt.FoundIn, ", ") + ")"
		}
		msgs = append(msgs, m)
		libsAll = append(libsAll, lt.Libraries...)
	}
	for t := range linked {
		d.Linked = append(d.Linked, t)
	}
	sort.Strings(d.Linked)
	if len(d.Linked) > 0 {
		msgs = append(msgs, fmt.Sprintf("targets %s are linked while %s are not: the signature of a fat library whose dependency list was generated on a different LLVM configuration (LLVM_TARGETS_TO_BUILD)",
			strings.Join(d.Linked, ", "), strings.Join(targets, ", ")))
	}
	d.Message = strings.Join(msgs, "; ")
	d.Fix = fmt.Sprintf("add %s to the library's link dependencies (e.g. the generated *_deps.cmake list), or build LLVM with LLVM_TARGETS_TO_BUILD limited to %s",
		strings.Join(libsAll, " "), orDefault(strings.Join(d.Linked, ";"), "the targets actually used"))
	return d
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// HoldsLLVMName reports whether one of names (each followed by a NUL; the last
// may be unterminated) is one LLVM or MLIR code defines: the C API,
// llvm::, mlir::. One pass that looks at the first byte of each name: a
// search for each prefix in turn took twice as long over the 100,000
// names of the archives in /usr/lib/x86_64-linux-gnu (C++ names start with
// '_').
func HoldsLLVMName(names []byte) bool {
	for len(names) > 0 {
		switch names[0] {
		case 'L':
			if bytes.HasPrefix(names, []byte("LLVM")) {
				return true
			}
		case '_':
			if bytes.HasPrefix(names, []byte("_ZN4llvm")) || bytes.HasPrefix(names, []byte("_ZN4mlir")) {
				return true
			}
		case 'm':
			if bytes.HasPrefix(names, []byte("mlir")) {
				return true
			}
		}
		e := bytes.IndexByte(names, 0)
		if e < 0 {
			return false
		}
		names = names[e+1:]
	}
	return false
}
