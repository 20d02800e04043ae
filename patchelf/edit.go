// Package patchelf edits the dynamic linking information of ELF files —
// RPATH/RUNPATH, NEEDED, SONAME, interpreter, OS ABI, GNU_STACK, DT_FLAGS_1,
// DT_DEBUG, symbol versions — without ever corrupting them.
//
// An edit is computed as a Plan first (pure: byte patches at known offsets
// plus, when tables must grow, one new PT_LOAD appended at the end of the
// file), verified by re-reading the would-be result through an overlay with
// elfx, and only then written: into a temporary file in the same directory
// that replaces the original atomically, or (InPlace) as patches to the
// original. A failed verification is an error and leaves the file
// byte-identical. The file is never read into memory as a whole.
//
// Layout rules: strings are reused where they already exist and overwritten
// in place when a shorter one replaces a string nothing else references;
// the dynamic section is rewritten in place while its entries fit. Growth
// moves .dynstr (and .dynamic, .interp when needed) into a new PT_LOAD whose
// file offset and address keep the distance of the first PT_LOAD, aligned to
// max(page size, largest p_align); the program header table moves into that
// segment with one more entry, PT_PHDR follows it, .dynamic stays writable
// and never executable, PT_GNU_RELRO is not touched, and the section headers
// are updated so strip and objcopy keep working.
package patchelf

import (
	"fmt"
	"strings"
)

// Kind names an edit.
type Kind string

// The edits, spelled like patchelf's options.
const (
	KindSetRPath       Kind = "set-rpath"
	KindAddRPath       Kind = "add-rpath"
	KindRemoveRPath    Kind = "remove-rpath"
	KindShrinkRPath    Kind = "shrink-rpath"
	KindAddNeeded      Kind = "add-needed"
	KindRemoveNeeded   Kind = "remove-needed"
	KindReplaceNeeded  Kind = "replace-needed"
	KindSetSoname      Kind = "set-soname"
	KindSetInterpreter Kind = "set-interpreter"
	KindSetOSABI       Kind = "set-os-abi"
	KindClearExecStack Kind = "clear-execstack"
	KindSetExecStack   Kind = "set-execstack"
	KindNoDefaultLib   Kind = "no-default-lib"
	KindAddDebugTag    Kind = "add-debug-tag"
	// KindBuildResolutionCache writes NixOS's resolution cache note
	// (patchelf's --build-resolution-cache): where each NEEDED library is
	// found in the run path, for the loader Nixpkgs patches to read.
	KindBuildResolutionCache Kind = "build-resolution-cache"
	KindClearSymbolVersion   Kind = "clear-symbol-version"
	// RenameDynamicSymbols renames .dynsym entries by Renames (all pairs at
	// once), rebuilding the hash tables and remapping relocations.
	KindRenameDynamicSymbols Kind = "rename-dynamic-symbols"
)

// Edit is one change. Arg is the value (path, name, OS ABI), Arg2 the
// replacement of ReplaceNeeded; Allowed lists the prefixes ShrinkRPath may
// keep (empty: any).
type Edit struct {
	Kind    Kind     `json:"kind"`
	Arg     string   `json:"arg,omitempty"`
	Arg2    string   `json:"arg2,omitempty"`
	Allowed []string `json:"allowed_prefixes,omitempty"`
	// Renames maps old to new symbol names for RenameDynamicSymbols.
	Renames map[string]string `json:"renames,omitempty"`
}

// Typed constructors of the edits, for the library: the argument order is
// the type's, not a convention of Arg and Arg2.

// SetRunpath sets the search path (DT_RUNPATH, or DT_RPATH with
// Options.ForceRPath) to dirs, in order.
func SetRunpath(dirs ...string) Edit { return Edit{Kind: KindSetRPath, Arg: strings.Join(dirs, ":")} }

// AddRunpath appends dirs to the search path.
func AddRunpath(dirs ...string) Edit { return Edit{Kind: KindAddRPath, Arg: strings.Join(dirs, ":")} }

// RemoveRunpath removes DT_RUNPATH and DT_RPATH.
func RemoveRunpath() Edit { return Edit{Kind: KindRemoveRPath} }

// ShrinkRunpath keeps the directories that hold a NEEDED library, and only
// those under one of allowed when any is given.
func ShrinkRunpath(allowed ...string) Edit { return Edit{Kind: KindShrinkRPath, Allowed: allowed} }

// AddNeeded adds a DT_NEEDED entry for lib.
func AddNeeded(lib string) Edit { return Edit{Kind: KindAddNeeded, Arg: lib} }

// RemoveNeeded removes the DT_NEEDED entry for lib.
func RemoveNeeded(lib string) Edit { return Edit{Kind: KindRemoveNeeded, Arg: lib} }

// ReplaceNeeded replaces the DT_NEEDED entry old by new (and the
// .gnu.version_r entry that names old).
func ReplaceNeeded(old, new string) Edit { return Edit{Kind: KindReplaceNeeded, Arg: old, Arg2: new} }

// SetSoname sets DT_SONAME.
func SetSoname(name string) Edit { return Edit{Kind: KindSetSoname, Arg: name} }

// SetInterpreter sets the program interpreter (PT_INTERP).
func SetInterpreter(path string) Edit { return Edit{Kind: KindSetInterpreter, Arg: path} }

// SetOSABI sets EI_OSABI by name ("System V", "GNU/Linux", …) or number.
func SetOSABI(abi string) Edit { return Edit{Kind: KindSetOSABI, Arg: abi} }

// ClearExecStack makes the stack non-executable (PT_GNU_STACK without PF_X).
func ClearExecStack() Edit { return Edit{Kind: KindClearExecStack} }

// SetExecStack makes the stack executable.
func SetExecStack() Edit { return Edit{Kind: KindSetExecStack} }

// NoDefaultLib sets DF_1_NODEFLIB: the default directories are not searched.
func NoDefaultLib() Edit { return Edit{Kind: KindNoDefaultLib} }

// AddDebugTag adds a DT_DEBUG entry.
func AddDebugTag() Edit { return Edit{Kind: KindAddDebugTag} }

// BuildResolutionCache records where each NEEDED library is found in the
// run path in a NixOS resolution cache note (.note.nixos.ldcache).
func BuildResolutionCache() Edit { return Edit{Kind: KindBuildResolutionCache} }

// ClearSymbolVersion removes the version of the dynamic symbol sym.
func ClearSymbolVersion(sym string) Edit { return Edit{Kind: KindClearSymbolVersion, Arg: sym} }

// RenameDynamicSymbols renames dynamic symbols by renames (old to new),
// all at once.
func RenameDynamicSymbols(renames map[string]string) Edit {
	return Edit{Kind: KindRenameDynamicSymbols, Renames: renames}
}

func (e Edit) String() string {
	s := "--" + string(e.Kind)
	if e.Arg != "" {
		s += " " + e.Arg
	}
	if e.Arg2 != "" {
		s += " " + e.Arg2
	}
	return s
}

// Options configure planning. The zero value plans as patchelf does for
// the file's machine: its page size, DT_RUNPATH, moved sections clobbered.
type Options struct {
	// PageSize overrides the machine's page size (0: 4 KiB on x86, 64 KiB
	// on aarch64, ppc64 and loongarch).
	PageSize uint64
	// ForceRPath makes set/add-rpath write DT_RPATH instead of converting
	// to DT_RUNPATH (patchelf's --force-rpath).
	ForceRPath bool
	// NoClobberOldSections keeps the bytes of sections an edit moved
	// where they were; by default they are overwritten with 'Z's and an
	// old RPATH no other name shares with 'X's, as patchelf does, so a
	// build path or stale string does not linger in the file (patchelf's
	// --no-clobber-old-sections).
	NoClobberOldSections bool
}

// Error is an edit that cannot be applied to a file.
type Error struct {
	Path string
	Msg  string
	// Patchelf is how NixOS patchelf words the same refusal, where it
	// differs from Msg: the drop-in command prints it, so scripts that
	// match patchelf's messages keep working.
	Patchelf string
}

func (e *Error) Error() string { return e.Path + ": " + e.Msg }

func errorf(path, format string, args ...any) error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// osabiNames are the values --set-os-abi accepts (patchelf's spelling).
// (patchelf's modifyOsAbi: "system v", "system-v", "sysv", "hp-ux",
// "netbsd", "linux", "gnu", "gnu hurd", "gnu-hurd", "hurd", "solaris",
// "aix", "irix", "freebsd", "tru64", "openbsd", "openvms", after trimming
// and lower-casing; the others are rocmdoctor's.)
var osabiNames = map[string]byte{
	"none": 0, "sysv": 0, "system v": 0, "system-v": 0, "hp-ux": 1, "hpux": 1, "netbsd": 2, "gnu": 3, "linux": 3, "gnu/linux": 3,
	"gnu hurd": 4, "gnu-hurd": 4, "hurd": 4,
	"solaris": 6, "aix": 7, "irix": 8, "freebsd": 9, "tru64": 10, "openbsd": 12, "openvms": 13, "arm": 97,
	"standalone": 255, "amdgpu_hsa": 64, "amdgpu-hsa": 64, "amdgpu_pal": 65, "amdgpu_mesa3d": 66,
}

// OSABIName is EI_OSABI as patchelf's --print-os-abi prints it: its name
// for the twelve patchelf knows, else 0xNN.
func OSABIName(v byte) string {
	names := map[byte]string{0: "System V", 1: "HP-UX", 2: "NetBSD", 3: "Linux", 4: "GNU Hurd", 6: "Solaris", 7: "AIX", 8: "IRIX",
		9: "FreeBSD", 10: "Tru64", 12: "OpenBSD", 13: "OpenVMS"}
	if n, ok := names[v]; ok {
		return n
	}
	return fmt.Sprintf("0x%02X", v)
}

// ParseOSABI parses an OS ABI name (any case, surrounding space ignored)
// or number.
func ParseOSABI(s string) (byte, error) {
	s = strings.TrimSpace(s)
	if v, ok := osabiNames[strings.ToLower(s)]; ok {
		return v, nil
	}
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err == nil && n >= 0 && n < 256 {
		return byte(n), nil
	}
	return 0, fmt.Errorf("unrecognized OS ABI %q", s)
}
