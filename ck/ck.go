// Package ck checks a composable_kernel install the way its consumers will
// use it: the components its CMake package config exports (read by
// ck/internal/cmake, no cmake needed) against what MIOpen or MIGraphX asks
// find_package for, each IMPORTED target's library (present, with kernel
// instances, for which GPUs), and the instance functions a consumer calls
// (add_device_…_instances) against what the archives define; the cause a
// broken install shows, and the cmake line that rebuilds it.
package ck

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/ck/internal/cmake"
	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
)

// Presets are the components MIOpen's find_package(composable_kernel …)
// asks for, by release. Sources: ROCm/MIOpen#2526 (ROCm 6.1) replaced
// `COMPONENTS device_operations` with the five split libraries, and
// MIOpen 6.2.2 asks for the same list; for 6.3 and 6.4 the
// contraction component was dropped and device_mha_operations added, and
// MIOpen 6.4.1 only warns when it is absent ("CK component
// 'device_mha_operations' not found", ROCm/composable_kernel#1646), so it
// is optional there.
var Presets = map[string]struct{ Required, Optional []string }{
	"miopen-6.0": {Required: []string{"device_operations"}},
	"miopen-6.1": {Required: []string{"device_other_operations", "device_gemm_operations", "device_conv_operations", "device_contraction_operations", "device_reduction_operations"}},
	"miopen-6.2": {Required: []string{"device_other_operations", "device_gemm_operations", "device_conv_operations", "device_contraction_operations", "device_reduction_operations"}},
	"miopen-6.3": {Required: []string{"device_other_operations", "device_gemm_operations", "device_conv_operations", "device_reduction_operations"}, Optional: []string{"device_mha_operations"}},
	"miopen-6.4": {Required: []string{"device_other_operations", "device_gemm_operations", "device_conv_operations", "device_reduction_operations"}, Optional: []string{"device_mha_operations"}},
}

// ckInstancePrefix is the mangled prefix of
// ck::tensor_operation::device::instance:: functions.
const ckInstancePrefix = "_ZN2ck16tensor_operation6device8instance"

func isCKInstance(name string) bool {
	return strings.HasPrefix(name, ckInstancePrefix) && strings.Contains(name, "add_device_")
}

// Options configure Check.
type Options struct {
	// Require lists components that must be present; Preset adds a MIOpen
	// release's list ("miopen-6.2"). With neither, every advertised
	// component is checked.
	Require []string
	Preset  string
	// Consumers are files (libMIOpen.so, objects) whose undefined
	// add_device_…_instances references must be defined by the install.
	Consumers []string
	// ConsumerRefs holds the references of consumers a caller has already
	// read (check's scan), by path, so they are not read again.
	ConsumerRefs map[string][]string
	// MissingSeverity is the severity of a missing required component
	// (default error; check uses warning when it only knows what the
	// config advertises).
	MissingSeverity finding.Severity
}

// Target is one IMPORTED target of an installed component.
type Target struct {
	Name          string   `json:"name"`
	Location      string   `json:"location,omitempty"`
	Config        string   `json:"config,omitempty"`
	Kind          string   `json:"kind,omitempty"` // archive, shared, missing, other
	Members       int      `json:"members,omitempty"`
	Instances     int      `json:"instance_functions"`
	GPUTargets    []string `json:"gpu_targets,omitempty"`
	LinkLibraries []string `json:"link_libraries,omitempty"`
	// Status is what is wrong with the target, in a few words ("ok",
	// "location missing", "no instances", …): its findings say more.
	Status string `json:"status"`
}

// Component is one component the config knows or was asked for.
type Component struct {
	Name        string   `json:"name"`
	TargetsFile string   `json:"targets_file"`
	Present     bool     `json:"present"`
	Required    bool     `json:"required"`
	Targets     []Target `json:"targets,omitempty"`
	// Status is "ok", "missing", "missing (optional)", or the first
	// target's that is not ok.
	Status string `json:"status"`
}

// Report is the result of Check.
type Report struct {
	SchemaVersion int               `json:"schema_version"`
	Prefix        string            `json:"prefix"`
	Config        string            `json:"config"`
	Advertised    []string          `json:"advertised_components"`
	Requested     []string          `json:"requested_components"`
	Components    []Component       `json:"components"`
	GPUTargets    []string          `json:"gpu_targets"`
	CMakeErrors   []string          `json:"cmake_errors,omitempty"`
	Findings      []finding.Finding `json:"findings"`
}

// missingSeverity is MissingSeverity, error when unset.
func (o Options) missingSeverity() finding.Severity {
	if o.MissingSeverity != "" {
		return o.MissingSeverity
	}
	return finding.SeverityError
}

// FindConfig locates composable_kernelConfig.cmake under prefix.
func FindConfig(prefix string) (string, error) {
	var tried []string
	for _, d := range []string{"lib", "lib64", "share"} {
		p := filepath.Join(prefix, d, "cmake", "composable_kernel", "composable_kernelConfig.cmake")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		tried = append(tried, p)
	}
	return "", fmt.Errorf("no composable_kernel install under %s (looked for %s)", prefix, strings.Join(tried, ", "))
}

// Check verifies a composable_kernel install: the components its config
// advertises and includes, every IMPORTED_LOCATION, the archives' machines,
// instance functions and GPU targets, link targets, and consumers'
// references. prefix may also name the config file itself.
func Check(prefix string, opts Options) (*Report, error) {
	cfg := prefix
	if st, err := os.Stat(prefix); err != nil {
		return nil, err
	} else if st.IsDir() {
		if cfg, err = FindConfig(prefix); err != nil {
			return nil, err
		}
	} else {
		prefix = filepath.Clean(filepath.Join(filepath.Dir(cfg), "..", "..", ".."))
	}
	rep := &Report{SchemaVersion: 1, Prefix: prefix, Config: cfg, Findings: []finding.Finding{}, GPUTargets: []string{}}
	// First pass: what the config advertises.
	probe := cmake.New()
	if err := probe.EvalFile(cfg); err != nil {
		return nil, err
	}
	for k, v := range probe.Vars {
		if strings.Contains(k, "supported_components") {
			rep.Advertised = cmake.SplitList(v)
		}
	}
	required, err := rep.request(opts)
	if err != nil {
		return nil, err
	}
	// Second pass: find_package(composable_kernel COMPONENTS …) as cmake runs it.
	in := cmake.New()
	in.Vars["composable_kernel_FIND_COMPONENTS"] = strings.Join(rep.Requested, ";")
	in.Vars["CMAKE_FIND_PACKAGE_NAME"] = "composable_kernel"
	for _, c := range rep.Requested {
		in.Vars["composable_kernel_FIND_REQUIRED_"+c] = map[bool]string{true: "1", false: "0"}[required[c]]
	}
	if err := in.EvalFile(cfg); err != nil {
		return nil, err
	}
	rep.CMakeErrors = in.Errors
	rep.components(required, opts)
	rep.targets(in)
	if len(opts.Consumers) > 0 {
		if err := checkCKConsumers(rep, opts.Consumers, opts.ConsumerRefs); err != nil {
			return nil, err
		}
	}
	explainCK(rep)
	return rep, nil
}

// request sets the components find_package asks for (rep.Requested:
// --require, the preset's, else every advertised one) and returns which
// are required.
func (rep *Report) request(opts Options) (map[string]bool, error) {
	required := map[string]bool{}
	var requested []string
	add := func(c string, req bool) {
		if !slices.Contains(requested, c) {
			requested = append(requested, c)
		}
		if req {
			required[c] = true
		}
	}
	for _, r := range opts.Require {
		add(r, true)
	}
	if opts.Preset != "" {
		p, ok := Presets[opts.Preset]
		if !ok {
			var names []string
			for k := range Presets {
				names = append(names, k)
			}
			sort.Strings(names)
			return nil, fmt.Errorf("unknown preset %q (known: %s)", opts.Preset, strings.Join(names, ", "))
		}
		for _, c := range p.Required {
			add(c, true)
		}
		for _, c := range p.Optional {
			add(c, false)
		}
	}
	if len(requested) == 0 {
		for _, c := range rep.Advertised {
			add(c, true)
		}
	}
	rep.Requested = requested
	if len(requested) == 0 {
		// Nothing advertised and nothing asked for: nothing below would
		// be checked, so the config itself is the finding.
		rep.Findings = append(rep.Findings, finding.Finding{Rule: finding.RuleCKComponentMissing, Severity: opts.missingSeverity(), File: rep.Config,
			Message: fmt.Sprintf("%s advertises no components (it sets no _composable_kernel_supported_components list): find_package(composable_kernel COMPONENTS …) fails for every component", filepath.Base(rep.Config)),
			Fix:     "reinstall composable_kernel (its generated config lists the components it built), or name the components with --require / --for"})
	}
	return required, nil
}

// components records each requested component: advertised or not, and
// whether its Targets file is installed.
func (rep *Report) components(required map[string]bool, opts Options) {
	cfg := rep.Config
	dir := filepath.Dir(cfg)
	for _, c := range rep.Requested {
		comp := Component{Name: c, Required: required[c], TargetsFile: filepath.Join(dir, "composable_kernel"+c+"Targets.cmake")}
		_, err := os.Stat(comp.TargetsFile)
		comp.Present = err == nil
		switch {
		case comp.Present:
			comp.Status = "ok"
		case required[c]:
			comp.Status = "missing"
		default:
			comp.Status = "missing (optional)"
		}
		if len(rep.Advertised) > 0 && !slices.Contains(rep.Advertised, c) {
			comp.Status = "not advertised"
			rep.Findings = append(rep.Findings, finding.Finding{Rule: finding.RuleCKComponentMissing, Severity: finding.SeverityError, File: cfg, Library: c,
				Message: fmt.Sprintf("component %s is not among the components %s advertises (%s): find_package fails with \"Unsupported component: %s\"", c, filepath.Base(cfg), strings.Join(rep.Advertised, ", "), c),
				Fix:     "use a composable_kernel release that has this component, or pick the consumer preset matching this CK release"})
		} else if !comp.Present {
			sev := opts.missingSeverity()
			if !required[c] {
				sev = finding.SeverityWarning
			}
			rep.Findings = append(rep.Findings, finding.Finding{Rule: finding.RuleCKComponentMissing, Severity: sev, File: cfg, Library: c,
				Message: fmt.Sprintf("%s is missing: find_package(composable_kernel COMPONENTS %s) fails with \"include could not find requested file\"; CK skips a component that has no kernel instances for its GPU targets", comp.TargetsFile, c),
				Fix:     "rebuild composable_kernel with GPU targets that have instances for this component (see the cause below)"})
		}
		rep.Components = append(rep.Components, comp)
	}
}

// targets attributes each imported target the evaluation defined to its
// component by the file that defined it, checks what it links and where
// its library is, and collects the GPU targets of the libraries.
func (rep *Report) targets(in *cmake.Interp) {
	gpu := map[string]bool{}
	for i := range rep.Components {
		comp := &rep.Components[i]
		for name, tg := range in.Targets {
			base := filepath.Base(tg.DefinedIn)
			if base != "composable_kernel"+comp.Name+"Targets.cmake" {
				continue
			}
			ct := Target{Name: name}
			for _, l := range cmake.SplitList(tg.Properties["INTERFACE_LINK_LIBRARIES"]) {
				// $<LINK_ONLY:x> is how static libraries export private deps.
				l = strings.TrimSuffix(strings.TrimPrefix(l, "$<LINK_ONLY:"), ">")
				ct.LinkLibraries = append(ct.LinkLibraries, l)
				if strings.HasPrefix(l, "composable_kernel::") && in.Targets[l] == nil {
					rep.Findings = append(rep.Findings, finding.Finding{Rule: finding.RuleCKMissingTarget, Severity: finding.SeverityError, File: tg.DefinedIn, Library: l,
						Message: fmt.Sprintf("%s links %s, which no installed Targets file defines", name, l),
						Fix:     "install the component that exports " + l + " (request it in find_package as well)"})
				}
			}
			loc, cfgName := importedLocation(tg.Properties)
			ct.Location, ct.Config = loc, cfgName
			if tg.Type != "INTERFACE" {
				checkCKLocation(rep, comp, name, tg.DefinedIn, &ct, gpu)
			} else {
				ct.Status = "ok"
			}
			comp.Targets = append(comp.Targets, ct)
		}
		sort.Slice(comp.Targets, func(a, b int) bool { return comp.Targets[a].Name < comp.Targets[b].Name })
	}
	for t := range gpu {
		rep.GPUTargets = append(rep.GPUTargets, t)
	}
	sort.Strings(rep.GPUTargets)
}

// importedLocation returns IMPORTED_LOCATION_<CONFIG> for the first
// configuration listed, or IMPORTED_LOCATION.
func importedLocation(props map[string]string) (string, string) {
	for _, c := range cmake.SplitList(props["IMPORTED_CONFIGURATIONS"]) {
		if v := props["IMPORTED_LOCATION_"+c]; v != "" {
			return v, c
		}
	}
	if v := props["IMPORTED_LOCATION"]; v != "" {
		return v, ""
	}
	var keys []string
	for k := range props {
		if strings.HasPrefix(k, "IMPORTED_LOCATION_") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		return props[keys[0]], strings.TrimPrefix(keys[0], "IMPORTED_LOCATION_")
	}
	return "", ""
}

func checkCKLocation(rep *Report, comp *Component, name, definedIn string, ct *Target, gpu map[string]bool) {
	ct.Status = "ok"
	defer func() {
		if ct.Status == "ok" || comp.Status != "ok" {
			return
		}
		comp.Status = ct.Status
	}()
	bad := func(msg string) {
		if ct.Status == "ok" {
			switch ct.Kind {
			case "missing":
				ct.Status = "location missing"
			case "other":
				ct.Status = "not a library"
			case "":
				ct.Status = "no location"
			default:
				ct.Status = "foreign objects"
			}
		}
		rep.Findings = append(rep.Findings, finding.Finding{Rule: finding.RuleCKBadLocation, Severity: finding.SeverityError, File: definedIn, Library: name,
			Message: msg, Fix: "reinstall composable_kernel (the Targets files and the libraries must come from the same install)"})
	}
	if ct.Location == "" {
		bad(fmt.Sprintf("%s has no IMPORTED_LOCATION", name))
		return
	}
	pr, err := elfx.OpenProbe(ct.Location)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		ct.Kind = "missing"
		bad(fmt.Sprintf("%s: IMPORTED_LOCATION_%s %s does not exist", name, ct.Config, ct.Location))
		return
	case err != nil:
		ct.Kind = "other"
		bad(fmt.Sprintf("%s: IMPORTED_LOCATION_%s: %v", name, ct.Config, err))
		return
	}
	switch pr.Kind() {
	case elfx.KindArchive, elfx.KindThinArchive:
		ct.Kind = "archive"
		a, err := pr.Archive()
		if err != nil {
			bad(fmt.Sprintf("%s: %v", name, err))
			return
		}
		defer a.Close()
		ct.Members = len(a.Members)
		for _, s := range a.Symbols {
			if isCKInstance(s.Name) {
				ct.Instances++
			}
		}
		var wrong []string
		for i := range a.Members {
			f, err := a.OpenELF(i)
			if err != nil {
				continue
			}
			if f.Machine != elf.EM_X86_64 || f.Class != elf.ELFCLASS64 {
				wrong = append(wrong, a.Members[i].Name+" ("+f.Header.Identity()+")")
			}
			cos, _ := f.GPUCodeObjects()
			for _, c := range cos {
				if c.TargetID != "" {
					gpu[c.TargetID] = true
					if !slices.Contains(ct.GPUTargets, c.TargetID) {
						ct.GPUTargets = append(ct.GPUTargets, c.TargetID)
					}
				}
			}
		}
		sort.Strings(ct.GPUTargets)
		if len(wrong) > 0 {
			bad(fmt.Sprintf("%s: %s has members that are not x86-64 host objects: %s", name, ct.Location, strings.Join(wrong, ", ")))
		}
		if ct.Instances == 0 && strings.HasPrefix(comp.Name, "device_") {
			if ct.Status == "ok" {
				ct.Status = "no instances"
			}
			rep.Findings = append(rep.Findings, finding.Finding{Rule: finding.RuleCKNoInstances, Severity: finding.SeverityError, File: ct.Location, Library: comp.Name,
				Message: fmt.Sprintf("%s defines no ck::tensor_operation::device::instance::add_device_…_instances functions: the component was built without kernel instances", ct.Location),
				Fix:     "rebuild composable_kernel with GPU targets that have instances for " + comp.Name})
		}
	case elfx.KindELF:
		pr.Close()
		ct.Kind = "shared"
	default:
		pr.Close()
		ct.Kind = "other"
		bad(fmt.Sprintf("%s: %s is neither an archive nor an ELF library", name, ct.Location))
	}
}

// componentFor guesses which component provides an instance function.
func componentFor(demangled string) string {
	n := demangled
	if i := strings.Index(n, "add_device_"); i >= 0 {
		n = n[i:]
	}
	switch {
	case strings.Contains(n, "conv"):
		return "device_conv_operations"
	case strings.Contains(n, "contraction"):
		return "device_contraction_operations"
	case strings.Contains(n, "reduce") || strings.Contains(n, "pool"):
		return "device_reduction_operations"
	case strings.Contains(n, "mha") || strings.Contains(n, "fmha") || strings.Contains(n, "softmax_gemm"):
		return "device_mha_operations"
	case strings.Contains(n, "gemm"):
		return "device_gemm_operations"
	}
	return "device_other_operations"
}

func checkCKConsumers(rep *Report, consumers []string, known map[string][]string) error {
	defined := map[string]bool{}
	for _, c := range rep.Components {
		for _, t := range c.Targets {
			if t.Kind != "archive" {
				continue
			}
			a, err := elfx.OpenArchive(t.Location)
			if err != nil {
				continue
			}
			for _, s := range a.Symbols {
				defined[s.Name] = true
			}
			a.Close()
		}
	}
	for _, p := range consumers {
		refs, ok := known[p]
		if !ok {
			var err error
			if refs, err = ckReferences(p); err != nil {
				return err
			}
		}
		for _, r := range refs {
			if defined[r] {
				continue
			}
			d := finding.Demangle(r)
			comp := componentFor(d)
			rep.Findings = append(rep.Findings, finding.Finding{Rule: finding.RuleCKMissingInstance, Severity: finding.SeverityError, File: p, Symbol: r, Demangled: d, Library: comp,
				Message: fmt.Sprintf("%s calls %s, which no installed composable_kernel archive defines (expected in %s)", p, shortName(d, r), comp),
				Fix:     fmt.Sprintf("rebuild composable_kernel so that %s has instances for the consumer's data types and GPU targets", comp)})
		}
	}
	return nil
}

func shortName(demangled, raw string) string {
	if demangled == "" {
		return raw
	}
	if i := strings.Index(demangled, "("); i > 0 {
		return demangled[:i]
	}
	return demangled
}

// ckReferences returns the undefined CK instance functions a file (shared
// library, executable, object or archive) references.
func ckReferences(path string) ([]string, error) {
	p, err := elfx.OpenProbe(path)
	if err != nil {
		return nil, err
	}
	switch p.Kind() {
	case elfx.KindELF:
		f, err := p.ELF()
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return ReferencesOf(f, nil)
	case elfx.KindArchive, elfx.KindThinArchive:
		defer p.Close()
		a, err := elfx.NewArchiveSize(p, p.Info.Size(), path)
		if err != nil {
			return nil, err
		}
		defer a.Close()
		var out []string
		for i := range a.Members {
			if f, err := a.OpenELF(i); err == nil {
				refs, _ := ReferencesOf(f, nil)
				for _, r := range refs {
					if !slices.Contains(out, r) {
						out = append(out, r)
					}
				}
			}
		}
		return out, nil
	}
	err = elfx.NotELFOrArchive(path, p.Head)
	p.Close()
	return nil, err
}

// ReferencesOf returns the undefined CK instance functions f references; t,
// when not nil, is f's dynamic symbol table already in hand.
func ReferencesOf(f *elfx.File, t *elfx.SymbolTable) ([]string, error) {
	var syms []elfx.Symbol
	var err error
	switch {
	case f.Type == elf.ET_REL:
		syms, err = f.Symbols()
	case t != nil:
		syms = t.UndefinedWithPrefix(ckInstancePrefix)
	default:
		if t, err = f.DynamicSymbolTable(); err == nil {
			syms = t.UndefinedWithPrefix(ckInstancePrefix)
		}
	}
	var out []string
	for _, s := range syms {
		if !s.Defined() && isCKInstance(s.Name) && !slices.Contains(out, s.Name) {
			out = append(out, s.Name)
		}
	}
	return out, err
}

// explainCK adds the likely cause to component findings, from the GPU
// targets the installed archives were built for.
func explainCK(rep *Report) {
	has := func(pred func(string) bool) bool {
		for _, t := range rep.GPUTargets {
			if pred(t) {
				return true
			}
		}
		return false
	}
	proc := func(t string) string { id, _ := elfx.ParseTargetID(t); return id.Processor }
	xdl := has(func(t string) bool {
		p := proc(t)
		return p == "gfx908" || p == "gfx90a" || strings.HasPrefix(p, "gfx94") || p == "gfx950"
	})
	wmma := has(func(t string) bool { return strings.HasPrefix(proc(t), "gfx11") || strings.HasPrefix(proc(t), "gfx12") })
	var causes []string
	if len(rep.GPUTargets) > 0 {
		causes = append(causes, "the archives hold device code for "+strings.Join(rep.GPUTargets, ", "))
	}
	if !xdl {
		causes = append(causes, "no gfx908/gfx90a/gfx94x target, so no XDL instances (most conv and contraction kernels)")
	}
	// Only what the targets show: WMMA matters where there is no XDL
	// target either, DL where a gfx103x target is built.
	if !wmma && !xdl {
		causes = append(causes, "no gfx11/gfx12 target either, so no WMMA instances")
	}
	if has(func(t string) bool { return strings.HasPrefix(proc(t), "gfx103") }) {
		causes = append(causes, "for the gfx103x targets CK has DL instances, built only with DL_KERNELS=ON")
	}
	if len(causes) == 0 {
		causes = append(causes, "the archives hold no device code at all (GPU_TARGETS empty, or INSTANCES_ONLY builds without kernels)")
	}
	cause := strings.Join(causes, "; ")
	fix := `cmake -DGPU_TARGETS="gfx90a;gfx1100" -DDL_KERNELS=ON -DINSTANCES_ONLY=OFF … (list the GPUs you need; include a gfx9 XDL target for conv/contraction)`
	for i := range rep.Findings {
		f := &rep.Findings[i]
		if f.Rule == finding.RuleCKComponentMissing && f.Library == "" {
			continue // a config that advertises nothing: not a GPU-target matter
		}
		if f.Rule == finding.RuleCKComponentMissing || f.Rule == finding.RuleCKNoInstances || f.Rule == finding.RuleCKMissingInstance {
			f.Message += ". Likely cause: " + cause
			f.Fix = fix
		}
	}
}

// CheckInScan checks a composable_kernel CMake config as check's scan does:
// against the scan's consumers (their CK references by path, read during
// the scan), a missing component a warning (the scan knows only what the
// config advertises), and a config that cannot be evaluated a finding of
// its own (RD1306: an error where cmake fails on it too) instead of an
// error of the scan.
func CheckInScan(path string, consumers map[string][]string) ([]finding.Finding, error) {
	paths := make([]string, 0, len(consumers))
	for p := range consumers {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	rep, err := Check(path, Options{MissingSeverity: finding.SeverityWarning, Consumers: paths, ConsumerRefs: consumers})
	var le *cmake.LimitError
	var pe *cmake.ParseError
	switch {
	case errors.As(err, &le):
		// FILE:LINE is where it stopped, perhaps in a file it includes.
		sev := finding.SeverityWarning
		if le.CMakeFails {
			sev = finding.SeverityError
		}
		return []finding.Finding{ckConfigError(path, sev, err)}, nil
	case errors.As(err, &pe):
		return []finding.Finding{ckConfigError(path, finding.SeverityWarning, err)}, nil
	case err != nil:
		return nil, err
	}
	return rep.Findings, nil
}

// ckConfigError is RD1306 for the config at path.
func ckConfigError(path string, sev finding.Severity, err error) finding.Finding {
	r, _ := finding.LookupRule(finding.RuleCKConfigError)
	return finding.Finding{Rule: finding.RuleCKConfigError, Severity: sev, File: path, Message: err.Error() + "; its components are not checked", Fix: r.Fix}
}
