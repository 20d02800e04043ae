// Package prefix checks that a ROCm install is consistent: the release
// each component says it is from (RD1201), more than one copy of LLVM, a
// C++ runtime, HIP or an unwinder in one closure, and whether references
// cross between them as the loader binds them (RD1202), and the
// toolchain's layout (clang's resource directory, device libraries).
package prefix

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/regfile"
	"github.com/rocmdoctor/rocmdoctor/internal/walk"
	"github.com/rocmdoctor/rocmdoctor/rpath"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

// HeaderSets are the headers consumers include from other components when
// built a certain way; data, so more consumers can be added.
var HeaderSets = map[string]struct {
	Why     string
	Headers []string
	Fix     string
}{
	// MIGraphX's requirements.txt pins the composable_kernel it builds
	// with as "ROCm/composable_kernel@<commit> -DCK_BUILD_JIT_LIB=On":
	// CK's JIT library (its codegen, which installs the ck/host headers
	// and the jit_library component) is built only with that option, as
	// Spack's composable-kernel package also sets it. No CK release option
	// is named CK_BUILD_CODEGEN.
	"migraphx": {
		Why: "MIGraphX built with composable_kernel (MIGRAPHX_USE_COMPOSABLEKERNEL) includes CK's codegen headers",
		Headers: []string{"ck/host/device_gemm_multiple_d.hpp", "ck/host/device_batched_gemm_softmax_gemm.hpp",
			"ck/host/device_gemm_multiple_d/problem.hpp", "ck/host/headers.hpp"},
		Fix: "install the composable_kernel commit this MIGraphX release pins in its requirements.txt (ROCm/composable_kernel@<commit>, which may lie on CK's migraphx branch rather than in a release), configured with -DCK_BUILD_JIT_LIB=On, which builds and installs CK's codegen (the ck/host headers); or build MIGraphX with -DMIGRAPHX_USE_COMPOSABLEKERNEL=Off",
	},
}

// Options configure Check.
type Options struct {
	LibDirs  []string // Nix-style store paths searched too
	Programs []string // --for FILE: closures to check in addition to the prefix's own files
	Headers  []string // header sets to check ("migraphx")
	Resolver rpath.Options
}

// ComponentVersion is what one piece of evidence says about a release.
type ComponentVersion struct {
	Component string `json:"component"`
	Release   string `json:"release"` // ROCm major.minor it implies
	Version   string `json:"version"`
	Evidence  string `json:"evidence"`
}

// RuntimeCopies are the objects of one closure providing the same runtime.
type RuntimeCopies struct {
	Kind   string   `json:"kind"` // llvm, libstdc++, libc++, hip, unwinder
	Winner string   `json:"winner"`
	Others []string `json:"others"`
	// LinkedAgainst maps each loser to the objects that NEED it.
	LinkedAgainst map[string][]string `json:"linked_against,omitempty"`
	// Interposed maps each loser to the references its consumers make to
	// it that bind elsewhere in load order ("consumer: symbol[@version]"):
	// the crossings that make two copies a problem. None means the copies
	// are kept apart (by versions, or by disjoint names).
	Interposed map[string][]string `json:"interposed,omitempty"`
	Closure    string              `json:"closure"`
}

// Toolchain describes the clang under the prefix.
type Toolchain struct {
	Clang          string   `json:"clang,omitempty"`
	Version        string   `json:"version,omitempty"`
	ResourceDir    string   `json:"resource_dir,omitempty"`
	Headers        bool     `json:"resource_headers"`
	DeviceLibs     string   `json:"device_libs,omitempty"`
	DeviceLibFiles []string `json:"device_lib_files,omitempty"`
	Hipcc          string   `json:"hipcc,omitempty"`
	Amdclang       string   `json:"amdclang,omitempty"`
}

// Report is the result of Check.
type Report struct {
	SchemaVersion int                `json:"schema_version"`
	Prefix        string             `json:"prefix"`
	Versions      []ComponentVersion `json:"versions"`
	Majority      string             `json:"majority_release,omitempty"`
	Providers     []RuntimeCopies    `json:"duplicate_providers"`
	Toolchain     Toolchain          `json:"toolchain"`
	Findings      []finding.Finding  `json:"findings"`
	// Warnings are what resolution worked around (a damaged
	// ld.so.cache: rpath.Options.Warn), each once.
	Warnings []string `json:"warnings,omitempty"`
}

// The patterns are compiled on first use: compiling them when the package
// is initialised costs every command, and most never use them.
var (
	hipNode      = lazyRegexp(`^hip_(\d+)\.(\d+)$`)
	pkgVersion   = lazyRegexp(`set\(PACKAGE_VERSION "([0-9.]+)"\)`)
	releaseRe    = lazyRegexp(`^(\d+)\.(\d+)`)
	clangVersion = lazyRegexp(`clang version (\d+)\.(\d+)\.(\d+)`)
)

// lazyRegexp returns a function compiling expr on its first call.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

func release(v string) string {
	if m := releaseRe().FindStringSubmatch(v); m != nil {
		return m[1] + "." + m[2]
	}
	return ""
}

// Check checks a ROCm install (or a list of store paths) for consistency.
func Check(ctx context.Context, prefix string, o Options) (*Report, error) {
	st, err := os.Stat(prefix)
	if err != nil {
		return nil, finding.PathErr(prefix, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", prefix)
	}
	rep := &Report{SchemaVersion: 1, Prefix: prefix, Versions: []ComponentVersion{}, Providers: []RuntimeCopies{}, Findings: []finding.Finding{}}
	o.Resolver.KeepWarnings(&rep.Warnings)
	libDirs := append(libDirsOf(prefix), o.LibDirs...)
	rep.versions(prefix, libDirs)
	if err := rep.duplicates(ctx, libDirs, o); err != nil {
		return nil, err
	}
	rep.toolchain(prefix)
	// A directory with none of what is looked for is a wrong path, not a
	// consistent install: "no findings" there would pass a typo. (Header
	// sets asked for are findings of their own when missing.)
	tc := rep.Toolchain
	if len(o.Headers) == 0 && len(libDirs) == 0 && len(rep.Versions) == 0 && tc.Clang == "" && tc.Hipcc == "" && tc.Amdclang == "" && tc.DeviceLibs == "" {
		return nil, fmt.Errorf("%s: no ROCm install here: no lib, lib64 or llvm/lib directory, no release files (.info/version, include/rocm-core/rocm_version.h), no clang, hipcc or device libraries; give the install prefix (such as /opt/rocm), or --lib-dir", prefix)
	}
	for _, h := range o.Headers {
		set, ok := HeaderSets[h]
		if !ok {
			return nil, fmt.Errorf("unknown header set %q", h)
		}
		var missing []string
		for _, f := range set.Headers {
			if _, err := os.Stat(filepath.Join(prefix, "include", f)); err != nil {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 {
			rep.Findings = append(rep.Findings, finding.Finding{Rule: finding.RuleHeadersMissing, Severity: finding.SeverityError, File: filepath.Join(prefix, "include"), Library: h,
				Message: fmt.Sprintf("%s: %s; missing under %s/include: %s", h, set.Why, prefix, strings.Join(missing, ", ")),
				Fix:     set.Fix})
		}
	}
	return rep, nil
}

func libDirsOf(prefix string) []string {
	var out []string
	for _, d := range []string{"lib", "lib64", "lib/x86_64-linux-gnu", "llvm/lib"} {
		p := filepath.Join(prefix, d)
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			out = append(out, p)
		}
	}
	return out
}

func (rep *Report) versions(prefix string, libDirs []string) {
	add := func(c, v, ev string) {
		if r := release(v); r != "" {
			rep.Versions = append(rep.Versions, ComponentVersion{Component: c, Release: r, Version: v, Evidence: ev})
		}
	}
	infos, _ := filepath.Glob(filepath.Join(prefix, ".info", "version*"))
	for _, p := range infos {
		if b, err := regfile.ReadFile(p); err == nil {
			add("rocm-core", strings.TrimSpace(string(b)), p)
		}
	}
	if b, err := regfile.ReadFile(filepath.Join(prefix, "include", "rocm-core", "rocm_version.h")); err == nil {
		get := func(k string) string {
			m := regexp.MustCompile(`#define\s+` + k + `\s+(\d+)`).FindSubmatch(b)
			if m == nil {
				return ""
			}
			return string(m[1])
		}
		if mj, mn := get("ROCM_VERSION_MAJOR"), get("ROCM_VERSION_MINOR"); mj != "" && mn != "" {
			add("rocm-core", mj+"."+mn+"."+get("ROCM_VERSION_PATCH"), filepath.Join(prefix, "include", "rocm-core", "rocm_version.h"))
		}
	}
	for _, pat := range []string{"lib/cmake/hip/hip-config-version.cmake", "lib/cmake/hip/hipConfigVersion.cmake", "lib/cmake/hip/hip-config-version*.cmake"} {
		m, _ := filepath.Glob(filepath.Join(prefix, pat))
		for _, p := range m {
			if b, err := regfile.ReadFile(p); err == nil {
				if v := pkgVersion().FindSubmatch(b); v != nil {
					add("hip (cmake)", string(v[1]), p)
				}
			}
		}
	}
	// HIP runtime: its highest hip_X.Y version node says which release it is.
	seenHip := map[string]bool{}
	for _, d := range libDirs {
		m, _ := filepath.Glob(filepath.Join(d, "libamdhip64.so.*"))
		for _, p := range m {
			real, err := filepath.EvalSymlinks(p)
			if err != nil || seenHip[real] {
				continue
			}
			seenHip[real] = true
			f, err := elfx.Open(real)
			if err != nil {
				continue
			}
			defs, _ := f.VersionDefs()
			dy, _ := f.Dynamic()
			f.Close()
			best, bmj, bmn := "", -1, -1
			for _, v := range defs {
				if mm := hipNode().FindStringSubmatch(v.Name); mm != nil {
					mj, _ := strconv.Atoi(mm[1])
					mn, _ := strconv.Atoi(mm[2])
					if mj > bmj || mj == bmj && mn > bmn {
						best, bmj, bmn = v.Name, mj, mn
					}
				}
			}
			soname := ""
			if dy != nil {
				soname = dy.Soname
			}
			if best != "" {
				add("hip runtime", strings.TrimPrefix(best, "hip_"), fmt.Sprintf("%s (SONAME %s, newest version node %s)", real, soname, best))
			}
		}
	}
	if len(seenHip) > 1 {
		var ps []string
		for p := range seenHip {
			ps = append(ps, p)
		}
		sort.Strings(ps)
		rep.Findings = append(rep.Findings, finding.Finding{Rule: finding.RuleVersionSkew, Severity: finding.SeverityError, File: ps[0], Library: "libamdhip64",
			Message: fmt.Sprintf("%d HIP runtimes in one prefix: %s; a process that loads components built against both gets two HIP runtimes", len(ps), strings.Join(ps, ", ")),
			Fix:     "rebuild every component against one ROCm release and remove the other runtime"})
	}
	count := map[string]int{}
	for _, v := range rep.Versions {
		count[v.Release]++
	}
	for r, n := range count {
		if n > count[rep.Majority] || n == count[rep.Majority] && r > rep.Majority {
			rep.Majority = r
		}
	}
	for _, v := range rep.Versions {
		if v.Release != rep.Majority {
			rep.Findings = append(rep.Findings, finding.Finding{Rule: finding.RuleVersionSkew, Severity: finding.SeverityError, File: v.Evidence, Library: v.Component,
				Message: fmt.Sprintf("%s says ROCm %s (%s) while the rest of the prefix says %s", v.Component, v.Release, v.Evidence, rep.Majority),
				Fix:     "rebuild or reinstall " + v.Component + " from the same ROCm release as the rest"})
		}
	}
}

// kindOf classifies an object as a provider of a runtime.
func kindOf(t *symcheck.Table, soname string) string {
	switch {
	case strings.HasPrefix(soname, "libLLVM") || t.Defines("_ZN4llvm11LLVMContextC1Ev") || t.Defines("LLVMContextCreate"):
		// A copy of LLVM Core: it constructs its own LLVMContext (libraries
		// that merely instantiate llvm:: templates do not).
		return "llvm"
	case strings.HasPrefix(soname, "libstdc++"):
		return "libstdc++"
	case strings.HasPrefix(soname, "libc++.") || strings.HasPrefix(soname, "libc++_shared"):
		return "libc++"
	case t.Defines("hipMalloc") && t.Defines("hipLaunchKernel"):
		return "hip"
	}
	if fl := t.Unwinder(); fl != "" && fl != symcheck.FlavourUnknown {
		return "unwinder" // sanitizer runtimes' _Unwind_* interceptors are not unwinders
	}
	return ""
}

func (rep *Report) duplicates(ctx context.Context, libDirs []string, o Options) error {
	var roots []string
	for _, d := range libDirs {
		walk.Dir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || !e.Type().IsRegular() || !strings.Contains(e.Name(), ".so") {
				return nil
			}
			roots = append(roots, p)
			return nil
		})
	}
	roots = append(roots, o.Programs...)
	ro := o.Resolver
	ro.LibDirs = append(append([]string(nil), ro.LibDirs...), libDirs...)
	b := symcheck.NewBinder(rpath.New(ro))
	seen := map[string]bool{}
	kinds := map[string]string{}
	for _, root := range roots {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := elfx.Open(root)
		if err != nil {
			continue
		}
		_, derr := f.Dynamic()
		ok := derr == nil && (f.Type == elf.ET_DYN || f.Type == elf.ET_EXEC)
		f.Close()
		if !ok {
			continue
		}
		res, tabs, err := b.Closure(ctx, root)
		if err != nil {
			continue
		}
		byKind := map[string][]string{}
		for i, obj := range res.Objects {
			k, ok := kinds[obj.Path]
			if !ok {
				k = kindOf(tabs[i], obj.Soname)
				kinds[obj.Path] = k
			}
			if k != "" {
				byKind[k] = append(byKind[k], obj.Path)
			}
		}
		// libstdc++ next to libc++ is the C++-runtime pair.
		if len(byKind["libstdc++"]) > 0 && len(byKind["libc++"]) > 0 {
			byKind["c++ runtime"] = append(byKind["libstdc++"], byKind["libc++"]...)
		}
		for _, k := range []string{"llvm", "libstdc++", "libc++", "c++ runtime", "hip", "unwinder"} {
			objs := byKind[k]
			if len(objs) < 2 {
				continue
			}
			key := k + "|" + strings.Join(objs, "|")
			if seen[key] {
				continue
			}
			seen[key] = true
			pv := RuntimeCopies{Kind: k, Winner: objs[0], Others: objs[1:], Closure: root, LinkedAgainst: map[string][]string{}}
			for _, loser := range pv.Others {
				for _, obj := range res.Objects {
					for _, d := range obj.Deps {
						if d.Object != nil && d.Object.Path == loser {
							if !slices.Contains(pv.LinkedAgainst[loser], obj.Path) {
								pv.LinkedAgainst[loser] = append(pv.LinkedAgainst[loser], obj.Path)
							}
						}
					}
				}
			}
			pv.Interposed = interposed(res, tabs, pv)
			rep.Providers = append(rep.Providers, pv)
			var parts []string
			crossings := 0
			for _, l := range pv.Others {
				part := fmt.Sprintf("%s (needed by %s", l, strings.Join(pv.LinkedAgainst[l], ", "))
				if n := len(pv.Interposed[l]); n > 0 {
					part += fmt.Sprintf("; %d reference(s) to it bind to %s instead: %s", n, pv.Winner, strings.Join(firstN(pv.Interposed[l], 3), ", "))
				}
				parts = append(parts, part+")")
				crossings += len(pv.Interposed[l])
			}
			fd := finding.Finding{Rule: finding.RuleDuplicateProvider, Severity: finding.SeverityError, File: root, Library: k,
				Message: fmt.Sprintf("%d copies of %s in the closure of %s: %s wins by load order and interposes references meant for %s", len(objs), k, root, pv.Winner, strings.Join(parts, "; ")),
				Fix:     "build every component against one " + k + " (for LLVM: build ROCm on the distribution's LLVM, or link it statically with hidden visibility)"}
			if k == "unwinder" {
				// One unwinding ABI: what matters is not who wins but
				// whether references reach two copies (as for RD1101).
				crossings = 0
				if unwindCopiesBound(res, tabs, objs) > 1 {
					crossings = 1
				}
			}
			if crossings == 0 {
				// As LD_DEBUG=bindings shows: every reference binds to the
				// copy it was linked against (LLVM_15 and LLVM_17 version
				// nodes keep two LLVMs apart).
				fd.Severity = finding.SeverityNote
				fd.Message = fmt.Sprintf("%d copies of %s in the closure of %s, loaded without interposition: every reference of the objects linked against %s binds to it", len(objs), k, root, strings.Join(pv.Others, ", "))
				fd.Fix = "none needed now; both copies take memory and start-up time, and unversioned copies would interpose"
				if k == "unwinder" {
					fd.Message = fmt.Sprintf("%d copies of the unwinder in the closure of %s, but every reference to the unwinding ABI binds to one copy: no exception crosses between them", len(objs), root)
					fd.Fix = "none needed now; linking every component against one unwinder keeps it so"
				}
			}
			rep.Findings = append(rep.Findings, fd)
		}
	}
	return nil
}

// interposed lists, for each losing copy of pv, the references of the
// objects that NEED it which it defines but which bind, in load order, to
// another object (the crossings LD_DEBUG=bindings shows).
func interposed(res *rpath.Result, tabs []*symcheck.Table, pv RuntimeCopies) map[string][]string {
	copies := append([]string{pv.Winner}, pv.Others...)
	idx := map[string]int{}
	for i, o := range res.Objects {
		idx[o.Path] = i
	}
	out := map[string][]string{}
	for _, l := range pv.Others {
		lt := tabs[idx[l]]
		for _, c := range pv.LinkedAgainst[l] {
			ct := tabs[idx[c]]
			ct.Symbols().EachUndefined(func(u elfx.Symbol) bool {
				k := elfx.NewKey(u.Name)
				if ok, _ := lt.Symbols().Binds(&k, u.Version); !ok {
					return true
				}
				for j, o := range res.Objects {
					if ok, _ := tabs[j].Symbols().Binds(&k, u.Version); ok {
						// (Taken by another copy: glibc's backtrace before
						// libunwind's is no second copy at work.)
						if o.Path != l && slices.Contains(copies, o.Path) {
							ref := u.Name
							if u.Version != "" {
								ref += "@" + u.Version
							}
							out[l] = append(out[l], filepath.Base(c)+": "+ref)
						}
						break
					}
				}
				return true
			})
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// unwindCopiesBound counts the copies among objs (paths of res's objects)
// that references to _Unwind_RaiseException or _Unwind_Resume bind to.
func unwindCopiesBound(res *rpath.Result, tabs []*symcheck.Table, objs []string) int {
	bound := map[string]bool{}
	for _, t := range tabs {
		for _, u := range t.UnwindReferences() {
			k := elfx.NewKey(u.Name)
			for j, o := range res.Objects {
				if ok, _ := tabs[j].Symbols().Binds(&k, u.Version); ok {
					if slices.Contains(objs, o.Path) {
						bound[o.Path] = true
					}
					break
				}
			}
		}
	}
	return len(bound)
}

func firstN(xs []string, n int) []string {
	if len(xs) > n {
		return append(xs[:n:n], fmt.Sprintf("and %d more", len(xs)-n))
	}
	return xs
}

func (rep *Report) toolchain(prefix string) {
	tc := &rep.Toolchain
	var llvmRoot string
	cands := []string{filepath.Join(prefix, "llvm"), filepath.Join(prefix, "lib", "llvm")}
	if m, _ := filepath.Glob(filepath.Join(prefix, "lib", "llvm-*")); len(m) > 0 {
		sort.Sort(sort.Reverse(sort.StringSlice(m)))
		cands = append(cands, m...)
	}
	for _, c := range cands {
		if _, err := os.Stat(filepath.Join(c, "bin", "clang")); err == nil {
			llvmRoot, tc.Clang = c, filepath.Join(c, "bin", "clang")
			break
		}
	}
	binDirs := []string{filepath.Join(prefix, "bin")}
	if llvmRoot != "" {
		binDirs = append(binDirs, filepath.Join(llvmRoot, "bin"))
	}
	for _, n := range []string{"hipcc", "amdclang++"} {
		for _, d := range binDirs {
			if _, err := os.Stat(filepath.Join(d, n)); err == nil {
				if n == "hipcc" {
					tc.Hipcc = filepath.Join(d, n)
				} else {
					tc.Amdclang = filepath.Join(d, n)
				}
				break
			}
		}
	}
	if tc.Clang == "" {
		return
	}
	real, err := filepath.EvalSymlinks(tc.Clang)
	if err != nil {
		return
	}
	mj, full := clangVersionOf(real, nil)
	if full == "" {
		// A dynamically linked clang keeps its version in libclang-cpp.so.N.
		if m, _ := filepath.Glob(filepath.Join(llvmRoot, "lib", "libclang-cpp.so.*")); len(m) > 0 {
			sort.Strings(m)
			major := strings.SplitN(strings.TrimPrefix(filepath.Base(m[0]), "libclang-cpp.so."), ".", 2)[0]
			mj, full = clangVersionOf(m[0], regexp.MustCompile(`\b(`+regexp.QuoteMeta(major)+`)\.(\d+)\.(\d+)\x00`))
		}
	}
	if full == "" {
		return
	}
	tc.Version = full
	// LLVM ≥ 16 names the resource directory by the major version only.
	want, other := full, mj
	if n, _ := strconv.Atoi(mj); n >= 16 {
		want, other = mj, full
	}
	wantDir := filepath.Join(llvmRoot, "lib", "clang", want)
	otherDir := filepath.Join(llvmRoot, "lib", "clang", other)
	if _, err := os.Stat(wantDir); err == nil {
		tc.ResourceDir = wantDir
	} else if _, err := os.Stat(otherDir); err == nil {
		tc.ResourceDir = otherDir
		rep.Findings = append(rep.Findings, finding.Finding{Rule: finding.RuleResourceDir, Severity: finding.SeverityError, File: otherDir, Library: "clang " + full,
			Message: fmt.Sprintf("clang %s looks for its resource directory at %s, but the install has %s (the layout of LLVM %s); standard headers such as stddef.h are not found", full, wantDir, otherDir, map[bool]string{true: "≤ 15", false: "≥ 16"}[want == mj]),
			Fix:     fmt.Sprintf("rename or symlink %s to %s, or pass -resource-dir=%s", otherDir, wantDir, otherDir)})
	} else {
		rep.Findings = append(rep.Findings, finding.Finding{Rule: finding.RuleResourceDir, Severity: finding.SeverityError, File: tc.Clang, Library: "clang " + full,
			Message: fmt.Sprintf("clang %s has no resource directory (%s)", full, wantDir), Fix: "install clang's resource headers (clang-resource-headers / the compiler-rt package)"})
	}
	if tc.ResourceDir != "" {
		_, err := os.Stat(filepath.Join(tc.ResourceDir, "include", "stddef.h"))
		tc.Headers = err == nil
		// The directory clang looks in is there but holds no headers
		// (an empty 15.0.6 beside a full 15): clang fails on
		// #include <stddef.h> all the same.
		if !tc.Headers && tc.ResourceDir == wantDir {
			msg := fmt.Sprintf("clang %s looks for its resource directory at %s, which exists but has no include/stddef.h: standard headers such as stddef.h are not found", full, wantDir)
			fix := "install clang's resource headers (clang-resource-headers / the compiler-rt package) into " + wantDir
			if _, err := os.Stat(filepath.Join(otherDir, "include", "stddef.h")); err == nil {
				msg += fmt.Sprintf("; they are in %s (the layout of LLVM %s)", otherDir, map[bool]string{true: "≥ 16", false: "≤ 15"}[want == mj])
				fix = fmt.Sprintf("remove the empty %s and rename or symlink %s to it, or pass -resource-dir=%s", wantDir, otherDir, otherDir)
			}
			rep.Findings = append(rep.Findings, finding.Finding{Rule: finding.RuleResourceDir, Severity: finding.SeverityError, File: wantDir, Library: "clang " + full, Message: msg, Fix: fix})
		}
	}
	// Device-library bitcode: ROCm ≥ 6.2 (clang ≥ 17) keeps it under the
	// resource directory, older releases under <prefix>/amdgcn/bitcode;
	// Debian patches clang to look in /usr/lib/<triplet>/amdgcn/bitcode.
	var where []string
	if tc.ResourceDir != "" {
		where = append(where, filepath.Join(tc.ResourceDir, "lib", "amdgcn", "bitcode"))
	}
	where = append(where, filepath.Join(prefix, "amdgcn", "bitcode"), filepath.Join(prefix, "lib", "amdgcn", "bitcode"),
		filepath.Join(prefix, "lib", "x86_64-linux-gnu", "amdgcn", "bitcode"))
	for _, d := range where {
		var found []string
		for _, lib := range []string{"ocml.bc", "ockl.bc", "oclc_isa_version_900.bc", "hip.bc"} {
			if isBitcode(filepath.Join(d, lib)) {
				found = append(found, lib)
			}
		}
		if len(found) >= 2 {
			tc.DeviceLibs, tc.DeviceLibFiles = d, found
			break
		}
	}
	if tc.DeviceLibs == "" {
		rep.Findings = append(rep.Findings, finding.Finding{Rule: finding.RuleDeviceLibs, Severity: finding.SeverityError, File: tc.Clang, Library: "clang " + full,
			Message: fmt.Sprintf("no AMDGPU device-library bitcode (ocml.bc, ockl.bc) in %s: HIP compiles fail with \"cannot find ROCm device library; provide its path via '--rocm-path' or '--rocm-device-lib-path'\"", strings.Join(where, ", ")),
			Fix:     "install rocm-device-libs where this clang looks (" + where[0] + ") or pass --rocm-device-lib-path=<dir with ocml.bc>"})
	}
}

// clangVersionOf reads "clang version X.Y.Z" from the binary's read-only
// data (never executing it): the major and the full version.
func clangVersionOf(path string, re *regexp.Regexp) (string, string) {
	if re == nil {
		re = clangVersion()
	}
	f, err := elfx.Open(path)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	for _, s := range f.ELF().Sections {
		if s.Name != ".rodata" && !strings.HasPrefix(s.Name, ".rodata.") {
			continue
		}
		const chunk = 1 << 20
		buf := make([]byte, chunk+64)
		for off := int64(0); off < int64(s.Size); off += chunk {
			n, _ := f.ReaderAt().ReadAt(buf[:min(int64(len(buf)), int64(s.Size)-off)], int64(s.Offset)+off)
			if m := re.FindSubmatch(buf[:n]); m != nil {
				return string(m[1]), string(m[1]) + "." + string(m[2]) + "." + string(m[3])
			}
		}
	}
	// Not an ELF with .rodata (a wrapper script, a symlink to one): no version.
	return "", ""
}

func isBitcode(p string) bool {
	fh, err := regfile.Open(p)
	if err != nil {
		return false
	}
	defer fh.Close()
	var m [4]byte
	n, _ := fh.Read(m[:])
	return n == 4 && (bytes.Equal(m[:], []byte("BC\xc0\xde")) || bytes.Equal(m[:], []byte{0xde, 0xc0, 0x17, 0x0b}))
}
