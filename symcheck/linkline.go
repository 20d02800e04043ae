package symcheck

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/rawpath"
)

// Link-line checking: parse compiler-driver or linker arguments the way lld
// and GNU ld read them, resolve every -l, and compare each input's ELF
// identity with the objects being linked.

// LinkTarget is the ELF identity a link produces.
type LinkTarget struct {
	Class   elf.Class
	Data    elf.Data
	Machine elf.Machine
	OSABI   elf.OSABI
	// From says where the identity came from: an object file, -target,
	// -m32, or the host default.
	From string
	// AMDGPU is the processor for amdgcn links (from the object or -mcpu).
	AMDGPU string
	// CodeObject is the code-object version of an amdgcn object (0 if unknown).
	CodeObject int
}

func (t LinkTarget) String() string {
	s := elfx.Header{Class: t.Class, Machine: t.Machine}.ClassName() + " " + elfx.MachineName(t.Machine)
	if t.AMDGPU != "" {
		s = elfx.MachineName(t.Machine) + " " + t.AMDGPU
	}
	return s
}

// LinkCandidate is one file a library search looked at.
type LinkCandidate struct {
	Path       string `json:"path"`
	Identity   string `json:"identity"` // "ELF64 EM_X86_64", "archive of ELF64 EM_X86_64", …
	Compatible bool   `json:"compatible"`
	Reason     string `json:"reason,omitempty"`
}

// LinkInput is one input of the link after resolution.
type LinkInput struct {
	Arg      string `json:"arg"`  // as written: "-lunwind", "k.o"
	Kind     string `json:"kind"` // "object", "archive", "shared", "source", "missing", "other"
	Path     string `json:"path,omitempty"`
	Identity string `json:"identity,omitempty"`
	// Compatible is false when the input's class, data, machine or OS ABI
	// differ from the link's.
	Compatible bool   `json:"compatible"`
	Reason     string `json:"reason,omitempty"`
	// Candidates are every file -l looked at, in search order; GNUPick is
	// the first compatible one, which GNU ld would use by skipping the
	// incompatible ones (lld takes the first and fails).
	Candidates []LinkCandidate `json:"candidates,omitempty"`
	GNUPick    string          `json:"gnu_ld_pick,omitempty"`
	// Dir is the -L directory the library was found in.
	Dir string `json:"dir,omitempty"`
	// Unpassed is what a -l the linker does not find would have found in
	// the driver's unpassed -L directories.
	Unpassed *LinkCandidate `json:"unpassed,omitempty"`
}

// LinkLine is a parsed and resolved link.
type LinkLine struct {
	Target     LinkTarget `json:"-"`
	TargetText string     `json:"target"`
	// SearchDirs are the -L directories the linker gets.
	SearchDirs []string `json:"search_dirs"`
	// Unpassed are -L directories given to the compiler driver that it
	// does not pass to the linker (clang ≤ 17 for amdgcn).
	Unpassed []string `json:"unpassed_search_dirs,omitempty"`
	// Driver says how the compiler driver was modelled: which of its
	// arguments reach the linker.
	Driver  string      `json:"driver,omitempty"`
	Sysroot string      `json:"sysroot,omitempty"`
	Inputs  []LinkInput `json:"inputs"`
}

// optionsWithValue are driver and linker options whose value is the next
// argument (so it is not an input).
var optionsWithValue = map[string]bool{
	"-o": true, "-x": true, "-I": true, "-D": true, "-U": true, "-include": true, "-MF": true, "-MT": true, "-MQ": true,
	"-Xclang": true, "-mllvm": true, "-z": true, "-T": true, "-soname": true, "-h": true, "-rpath": true, "-e": true,
	"-u": true, "--dynamic-linker": true, "-isystem": true, "-iquote": true, "-idirafter": true, "-Xassembler": true,
	"-arch": true, "-F": true, "--hip-path": true, "--rocm-path": true, "-version-script": true, "--version-script": true,
	"-y": true, "-Map": true, "--exclude-libs": true, "-O": true, "--entry": true, "-dynamic-linker": true,
}

// ParseLinkLine parses args (a compiler-driver or linker command line,
// optionally starting with the program name) and resolves its inputs.
//
// A clang driver line for an amdgcn target is read as clang's AMDGPU
// toolchain builds its ld.lld job (amdgpu::Linker::ConstructJob in
// clang/lib/Driver/ToolChains/AMDGPU.cpp): up to clang 17 it passes the
// inputs, -l and the -Wl,/-Xlinker options, not -L, so a -L given to the
// driver is searched by nobody (clang 15 warns "argument unused during
// compilation" and ld.lld says "unable to find library"). The version is
// read from the program name (clang-15, /usr/lib/llvm-15/bin/clang); when
// it is not known the line is read as written and Driver says so: a
// `clang -###` transcript (ParseLinkTranscript) settles it.
func ParseLinkLine(args []string) (*LinkLine, error) {
	return parseLinkLine(args, "")
}

// parseLinkLine is ParseLinkLine with the target triple of a transcript.
func parseLinkLine(args []string, defaultTriple string) (*LinkLine, error) {
	ll := &LinkLine{}
	var (
		triple, mcpu, emulation string
		m32, m64                bool
		static                  bool
		items                   []linkItem
		driverDirs              = map[int]bool{} // indices into ll.SearchDirs given to the driver itself
	)
	prog := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && looksLikeTool(args[0]) {
		prog, args = args[0], args[1:]
	}
	// Expand -Wl,a,b and -Xlinker a; toLinker marks what the driver
	// passes on as it is.
	var flat []string
	var toLinker []bool
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "-Wl,"):
			for _, x := range strings.Split(a[4:], ",") {
				flat, toLinker = append(flat, x), append(toLinker, true)
			}
		case a == "-Xlinker" && i+1 < len(args):
			flat, toLinker = append(flat, args[i+1]), append(toLinker, true)
			i++
		default:
			flat, toLinker = append(flat, a), append(toLinker, false)
		}
	}
	addDir := func(i int, d string) {
		if !toLinker[i] {
			driverDirs[len(ll.SearchDirs)] = true
		}
		ll.SearchDirs = append(ll.SearchDirs, d)
	}
	next := func(i *int, name string) (string, error) {
		if *i+1 >= len(flat) {
			return "", fmt.Errorf("%s needs a value", name)
		}
		*i++
		return flat[*i], nil
	}
	for i := 0; i < len(flat); i++ {
		a := flat[i]
		var err error
		switch {
		case a == "-L" || a == "--library-path":
			var d string
			if d, err = next(&i, a); err == nil {
				addDir(i, d)
			}
		case strings.HasPrefix(a, "--library-path="):
			addDir(i, a[len("--library-path="):])
		case strings.HasPrefix(a, "-L"):
			addDir(i, a[2:])
		case a == "-l" || a == "--library":
			var n string
			if n, err = next(&i, a); err == nil {
				items = append(items, libItem("-l"+n, n, static))
			}
		case strings.HasPrefix(a, "--library="):
			n := a[len("--library="):]
			items = append(items, libItem("-l"+n, n, static))
		case strings.HasPrefix(a, "-l"):
			items = append(items, libItem(a, a[2:], static))
		case a == "-Bstatic" || a == "-dn" || a == "-non_shared" || a == "-static" || a == "--static":
			static = true
		case a == "-Bdynamic" || a == "-dy" || a == "-call_shared":
			static = false
		case strings.HasPrefix(a, "--sysroot="):
			ll.Sysroot = a[len("--sysroot="):]
		case a == "--sysroot":
			ll.Sysroot, err = next(&i, a)
		case a == "-target" || a == "--target":
			triple, err = next(&i, a)
		case strings.HasPrefix(a, "--target="):
			triple = a[len("--target="):]
		case strings.HasPrefix(a, "-target="):
			triple = a[len("-target="):]
		case strings.HasPrefix(a, "-mcpu="):
			mcpu = a[len("-mcpu="):]
		case strings.HasPrefix(a, "--offload-arch="):
			mcpu = a[len("--offload-arch="):]
		case a == "-m32":
			m32 = true
		case a == "-m64":
			m64 = true
		case a == "-m":
			emulation, err = next(&i, a)
		case strings.HasPrefix(a, "-m") && strings.HasPrefix(a, "-melf"):
			emulation = a[2:]
		case optionsWithValue[a]:
			_, err = next(&i, a)
		case strings.HasPrefix(a, "-"):
			// Any other option does not name an input.
		default:
			items = append(items, linkItem{arg: a})
		}
		if err != nil {
			return nil, err
		}
	}
	// The link's identity: the first ELF object, else the flags.
	haveObj := false
	for _, it := range items {
		if it.lib != "" {
			continue
		}
		if h, ok := objectHeader(it.arg); ok {
			ll.Target = LinkTarget{Class: h.Class, Data: h.Data, Machine: h.Machine, OSABI: h.OSABI, From: it.arg}
			if h.AMDGPU != nil {
				ll.Target.AMDGPU, ll.Target.CodeObject = h.AMDGPU.TargetID(), h.AMDGPU.CodeObjectVersion
			}
			haveObj = true
			break
		}
	}
	if !haveObj {
		if triple == "" {
			triple = defaultTriple
		}
		ll.Target = targetFromFlags(triple, mcpu, emulation, m32, m64)
	}
	ll.TargetText = ll.Target.String()
	if ll.Target.Machine == elf.EM_AMDGPU && isClangDriver(prog) && len(driverDirs) > 0 {
		switch major := clangMajor(prog); {
		case major > 0 && major <= 17:
			ll.Driver = fmt.Sprintf("clang %d's AMDGPU toolchain passes inputs, -l and -Wl, options to ld.lld, not -L", major)
			kept := ll.SearchDirs[:0:0]
			for i, d := range ll.SearchDirs {
				if driverDirs[i] {
					ll.Unpassed = append(ll.Unpassed, d)
				} else {
					kept = append(kept, d)
				}
			}
			ll.SearchDirs = kept
		default:
			ll.Driver = "the clang version is not in the program name: -L is read as reaching ld.lld, which clang ≥ 19 does and clang ≤ 17 does not for amdgcn; `clang -### …` output (--link-transcript) shows what ld.lld gets"
		}
	}
	for _, it := range items {
		ll.Inputs = append(ll.Inputs, ll.resolve(it.arg, it.lib, it.exact, it.static))
	}
	return ll, nil
}

// linkItem is an input as written: a file, or a -l with its mode.
type linkItem struct {
	arg    string
	lib    string // the name of a -l
	exact  bool   // -l:name
	static bool   // after -Bstatic
}

func libItem(arg, name string, static bool) linkItem {
	return linkItem{arg: arg, lib: strings.TrimPrefix(name, ":"), exact: strings.HasPrefix(name, ":"), static: static}
}

// isClangDriver reports whether a program name is clang's driver (or
// hipcc, which runs it).
func isClangDriver(prog string) bool {
	base := filepath.Base(prog)
	return prog != "" && (strings.Contains(base, "clang") || strings.HasPrefix(base, "hipcc")) && !strings.Contains(base, "ld")
}

var clangVersionRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:clang(?:\+\+)?|llvm)-([0-9]+)(?:/|$)`) })

// clangMajor reads clang's major version from its program name or
// directory (clang-15, /usr/lib/llvm-15/bin/clang); 0 when neither says.
func clangMajor(prog string) int {
	m := clangVersionRe().FindStringSubmatch(prog)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func looksLikeTool(s string) bool {
	base := filepath.Base(s)
	for _, t := range []string{"clang", "gcc", "g++", "cc", "c++", "ld", "lld", "hipcc", "amdclang", "ld.lld", "ld.bfd", "ld.gold"} {
		if base == t || strings.HasPrefix(base, t+"-") || strings.HasPrefix(base, t+"++") || strings.HasSuffix(base, "-"+t) {
			return true
		}
	}
	return strings.Contains(base, "clang") || strings.HasSuffix(base, "-ld") || strings.HasPrefix(base, "ld.")
}

// objectHeader reads the header of a relocatable ELF object.
func objectHeader(p string) (elfx.Header, bool) {
	f, err := elfx.Open(p)
	if err != nil {
		return elfx.Header{}, false
	}
	defer f.Close()
	return f.Header, f.Type == elf.ET_REL
}

// targetFromFlags derives the link's identity from -target, -mcpu, -m32/-m64
// and a linker emulation (-m elf_x86_64); the host (x86-64) otherwise.
func targetFromFlags(triple, mcpu, emulation string, m32, m64 bool) LinkTarget {
	t := LinkTarget{Class: elf.ELFCLASS64, Data: elf.ELFDATA2LSB, Machine: elf.EM_X86_64, From: "host default"}
	arch := ""
	if triple != "" {
		arch = strings.SplitN(triple, "-", 2)[0]
		t.From = "-target " + triple
	} else if emulation != "" {
		t.From = "-m " + emulation
		switch {
		case strings.Contains(emulation, "x86_64"):
			arch = "x86_64"
		case strings.Contains(emulation, "i386"):
			arch = "i386"
		case strings.Contains(emulation, "aarch64"):
			arch = "aarch64"
		}
	}
	switch arch {
	case "amdgcn":
		t.Machine, t.OSABI = elf.EM_AMDGPU, elfx.ELFOSABI_AMDGPU_HSA
		t.AMDGPU = mcpu
		if t.AMDGPU == "" {
			t.AMDGPU = "(no -mcpu)"
		}
	case "i386", "i486", "i586", "i686":
		t.Class, t.Machine = elf.ELFCLASS32, elf.EM_386
	case "aarch64", "arm64":
		t.Machine = elf.EM_AARCH64
	case "powerpc64le", "ppc64le":
		t.Machine = elf.EM_PPC64
	case "powerpc64", "ppc64":
		t.Machine, t.Data = elf.EM_PPC64, elf.ELFDATA2MSB
	case "riscv64":
		t.Machine = elf.EM_RISCV
	case "nvptx64", "nvptx":
		t.Machine = elf.EM_CUDA
	}
	if m32 && t.Machine == elf.EM_X86_64 {
		t.Class, t.Machine = elf.ELFCLASS32, elf.EM_386
		t.From += ", -m32"
	}
	if m64 && t.Machine == elf.EM_386 {
		t.Class, t.Machine = elf.ELFCLASS64, elf.EM_X86_64
	}
	return t
}

// compatible compares an input header with the link target the way lld
// does (class, data, machine; OS ABI for AMDGPU).
func (t LinkTarget) compatible(h elfx.Header) (bool, string) {
	switch {
	case h.Class != t.Class || h.Machine != t.Machine:
		return false, fmt.Sprintf("%s, the link is for %s", h.Identity(), t)
	case h.Data != t.Data:
		return false, fmt.Sprintf("%s data, the link is %s", h.DataName(), elfx.Header{Data: t.Data}.DataName())
	case t.Machine == elf.EM_AMDGPU && h.OSABI != t.OSABI && t.OSABI != 0:
		return false, fmt.Sprintf("OS ABI %s, the link is %s", h.OSABIName(), elfx.OSABIName(t.OSABI))
	}
	return true, ""
}

// inspectInput classifies a file and checks it against the target. An
// archive is judged by its first ELF member.
func (ll *LinkLine) inspectInput(p string) (kind, ident string, ok bool, reason string) {
	pr, err := elfx.OpenProbe(p)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission):
		return "missing", "", false, err.Error()
	case err != nil:
		return "other", "", true, "" // a directory, a device
	}
	switch pr.Kind() {
	case elfx.KindELF:
		f, err := pr.ELF()
		if err != nil {
			return "other", "", false, err.Error()
		}
		defer f.Close()
		kind = "object"
		if f.Type == elf.ET_DYN {
			kind = "shared"
		}
		ok, reason = ll.Target.compatible(f.Header)
		return kind, f.Header.Identity(), ok, reason
	case elfx.KindArchive, elfx.KindThinArchive:
		a, err := pr.ArchiveMembers() // the members' machine, not the index
		if err != nil {
			return "archive", "", false, err.Error()
		}
		defer a.Close()
		for i := range a.Members {
			f, err := a.OpenELF(i)
			if err != nil {
				continue
			}
			ok, reason = ll.Target.compatible(f.Header)
			return "archive", "archive of " + f.Header.Identity(), ok, reason
		}
		return "archive", "archive without ELF members", true, ""
	}
	script := isLinkerScript(pr.Info.Size(), pr.Head)
	pr.Close()
	switch strings.ToLower(filepath.Ext(p)) {
	case ".s", ".c", ".cc", ".cpp", ".cxx", ".hip", ".cu", ".ll", ".bc", ".f90", ".f":
		return "source", "", true, ""
	}
	if script {
		return "linker-script", "", true, ""
	}
	return "other", "", true, ""
}

// isLinkerScript recognises the small GROUP(...) scripts that stand in for
// libc.so and friends: at most 4 KiB (all of it in head).
func isLinkerScript(size int64, head []byte) bool {
	return size <= 4096 && int64(len(head)) == size && strings.Contains(string(head), "GROUP")
}

func (ll *LinkLine) dirs() []string {
	out := make([]string, 0, len(ll.SearchDirs))
	for _, d := range ll.SearchDirs {
		switch {
		case strings.HasPrefix(d, "="):
			d = filepath.Join(ll.Sysroot, d[1:])
		case strings.HasPrefix(d, "$SYSROOT"):
			d = filepath.Join(ll.Sysroot, strings.TrimPrefix(d, "$SYSROOT"))
		}
		out = append(out, d)
	}
	return out
}

func (ll *LinkLine) resolve(arg, lib string, exact, static bool) LinkInput {
	in := LinkInput{Arg: arg, Compatible: true}
	if lib == "" {
		in.Path = arg
		in.Kind, in.Identity, in.Compatible, in.Reason = ll.inspectInput(arg)
		return in
	}
	var names []string
	switch {
	case exact:
		names = []string{lib}
	case static:
		names = []string{"lib" + lib + ".a"}
	default:
		names = []string{"lib" + lib + ".so", "lib" + lib + ".a"}
	}
	for _, d := range ll.dirs() {
		for _, n := range names {
			p := rawpath.Join(d, n) // as GNU ld and lld build it: ".." after a link leads where the link leads
			if st, err := os.Stat(p); err != nil || st.IsDir() {
				continue
			}
			kind, ident, ok, reason := ll.inspectInput(p)
			in.Candidates = append(in.Candidates, LinkCandidate{Path: p, Identity: ident, Compatible: ok, Reason: reason})
			if in.Path == "" {
				in.Path, in.Kind, in.Identity, in.Compatible, in.Reason, in.Dir = p, kind, ident, ok, reason, d
			}
			if ok && in.GNUPick == "" {
				in.GNUPick = p
			}
			break // lld takes the first name found in a directory (.so before .a)
		}
	}
	if in.Path == "" {
		in.Kind, in.Compatible, in.Reason = "missing", false, "not found in any -L directory"
		in.Unpassed = ll.lookUnpassed(names)
	}
	return in
}

// lookUnpassed finds what a -l would have found in the -L directories the
// driver did not pass on.
func (ll *LinkLine) lookUnpassed(names []string) *LinkCandidate {
	for _, d := range ll.Unpassed {
		for _, n := range names {
			p := rawpath.Join(d, n)
			if st, err := os.Stat(p); err != nil || st.IsDir() {
				continue
			}
			_, ident, ok, reason := ll.inspectInput(p)
			return &LinkCandidate{Path: p, Identity: ident, Compatible: ok, Reason: reason}
		}
	}
	return nil
}

// LinkFindings turns incompatible inputs into findings.
func LinkFindings(ll *LinkLine) []finding.Finding {
	var out []finding.Finding
	for _, in := range ll.Inputs {
		if in.Compatible {
			continue
		}
		f := finding.Finding{Rule: finding.RuleIncompatibleInput, Severity: finding.SeverityError, File: in.Path, Library: in.Arg}
		switch {
		case in.Kind == "missing" && strings.HasPrefix(in.Arg, "-l"):
			f.Rule = finding.RuleMissingLibrary
			// -l:NAME looks for NAME itself; -lNAME for libNAME.so, libNAME.a.
			looked := fmt.Sprintf("lib%s.so or lib%s.a", in.Arg[2:], in.Arg[2:])
			if name, exact := strings.CutPrefix(in.Arg, "-l:"); exact {
				looked = name
			}
			where := "the search path, which is empty"
			if dirs := ll.dirs(); len(dirs) > 0 {
				where = strings.Join(dirs, ":")
			}
			f.Message = fmt.Sprintf("%s: no %s in %s (ld.lld: \"unable to find library %s\", GNU ld: \"cannot find %s\")", in.Arg, looked, where, in.Arg, in.Arg)
			f.Fix = "add the -L directory that holds it, or drop the flag"
			if len(ll.Unpassed) > 0 {
				unpassedFinding(&f, ll, in, looked)
			}
		case in.Kind == "missing":
			f.Rule = finding.RuleMissingLibrary
			f.Message = fmt.Sprintf("input %s does not exist", in.Arg)
			f.Fix = "build it first or correct the path; the linker stops at a missing input"
		default:
			var what string
			if strings.HasPrefix(in.Arg, "-l") {
				what = fmt.Sprintf("`%s` resolves to %s (%s)", in.Arg, in.Path, in.Identity)
			} else {
				what = fmt.Sprintf("%s (%s)", in.Path, in.Identity)
			}
			f.Message = fmt.Sprintf("%s, but the link is for %s (%s)", what, ll.Target, targetSource(ll.Target))
			if ll.Target.Machine == elf.EM_AMDGPU && strings.HasPrefix(in.Arg, "-l") {
				f.Fix = fmt.Sprintf("the device link must not get host -l flags; remove %s or the -L%s injected by the wrapper", in.Arg, in.Dir)
			} else if strings.HasPrefix(in.Arg, "-l") {
				f.Fix = fmt.Sprintf("put a %s build of %s first in the search path, or remove -L%s", ll.Target, strings.TrimPrefix(in.Arg, "-l"), in.Dir)
			} else {
				f.Fix = fmt.Sprintf("rebuild %s for %s or remove it from the link", in.Path, ll.Target)
			}
			if in.GNUPick != "" && in.GNUPick != in.Path {
				f.Message += fmt.Sprintf("; GNU ld would skip it and use %s, lld stops with \"incompatible\"", in.GNUPick)
			} else if strings.HasPrefix(in.Arg, "-l") {
				f.Message += "; no compatible candidate in the search path (GNU ld would skip it silently and fail later)"
			}
		}
		out = append(out, f)
	}
	return out
}

// unpassedFinding explains a -l that ld.lld does not find because the
// driver kept the -L that would have found it.
func unpassedFinding(f *finding.Finding, ll *LinkLine, in LinkInput, looked string) {
	f.Message = fmt.Sprintf("%s: ld.lld finds no %s: %s, so -L%s given to the driver does not reach it and the link fails with \"unable to find library %s\"",
		in.Arg, looked, ll.Driver, strings.Join(ll.Unpassed, " -L"), in.Arg)
	u := in.Unpassed
	switch {
	case u == nil:
		f.Fix = fmt.Sprintf("remove %s from the amdgcn link: no directory given holds it", in.Arg)
	case !u.Compatible:
		f.Message += fmt.Sprintf("; in %s it would be %s (%s), incompatible with the link anyway", filepath.Dir(u.Path), u.Path, u.Identity)
		f.Fix = fmt.Sprintf("the device link must not get host -l flags; remove %s (and -L%s) from the amdgcn link or from what the wrapper adds to it", in.Arg, filepath.Dir(u.Path))
	default:
		f.Message += fmt.Sprintf("; it is %s (%s)", u.Path, u.Identity)
		f.Fix = fmt.Sprintf("pass the directory to ld.lld itself: -Wl,-L%s", filepath.Dir(u.Path))
	}
}

func targetSource(t LinkTarget) string {
	s := t.From
	if t.CodeObject > 0 {
		s += fmt.Sprintf(", code object v%d", t.CodeObject)
	}
	return s
}

// ParseLinkTranscript reads what `clang -### …` (or `gcc -###`) prints —
// one line per job, each argument quoted — and parses its last linker job
// (ld.lld, ld, collect2, …) as the linker gets it, with the transcript's
// "Target:" triple for a link without objects. name is used in errors.
func ParseLinkTranscript(r io.Reader, name string) (*LinkLine, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var job []string
	triple := ""
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if t, ok := strings.CutPrefix(line, "Target: "); ok {
			triple = strings.TrimSpace(t)
			continue
		}
		if !strings.HasPrefix(line, " ") {
			continue
		}
		args, err := splitJobLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if len(args) > 0 && isLinkerProgram(args[0]) {
			job = args
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if job == nil {
		return nil, fmt.Errorf("%s: no linker job (the output of `clang -### …` on a link command has one; with -c there is none)", name)
	}
	ll, err := parseLinkLine(job[1:], triple)
	if err != nil {
		return nil, fmt.Errorf("%s: the %s job: %w", name, filepath.Base(job[0]), err)
	}
	ll.Driver = fmt.Sprintf("the arguments of the %s job in %s", job[0], name)
	return ll, nil
}

// isLinkerProgram reports whether a job's program is a linker.
func isLinkerProgram(p string) bool {
	base := filepath.Base(p)
	return base == "ld" || base == "lld" || base == "collect2" || strings.HasPrefix(base, "ld.") || strings.HasSuffix(base, "-ld") || strings.HasPrefix(base, "ld64")
}

// splitJobLine splits one job line of a -### transcript: arguments are
// separated by spaces, and quoted ones escape ", \ and $ with a backslash
// (llvm::sys::printArg; gcc quotes the same way).
func splitJobLine(line string) ([]string, error) {
	var out []string
	i := 0
	for {
		for i < len(line) && line[i] == ' ' {
			i++
		}
		if i >= len(line) {
			return out, nil
		}
		var b strings.Builder
		if line[i] != '"' {
			for i < len(line) && line[i] != ' ' {
				b.WriteByte(line[i])
				i++
			}
			out = append(out, b.String())
			continue
		}
		i++
		for {
			if i >= len(line) {
				return nil, errors.New("unterminated quoted argument")
			}
			c := line[i]
			i++
			if c == '"' {
				break
			}
			if c == '\\' && i < len(line) {
				c = line[i]
				i++
			}
			b.WriteByte(c)
		}
		out = append(out, b.String())
	}
}
