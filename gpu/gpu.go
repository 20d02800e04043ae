// Package gpu tells which GPUs the device code of a build runs on: the
// AMDGPU code objects in ELF files, archives, offload bundles and wheels,
// their coverage of required target IDs by the target-ID rules
// (TargetCoverage), rocBLAS/hipBLASLt Tensile kernel directories and
// MIOpen kernel databases (Check, the gpus command), and the device-code
// findings check reports (RD1401–RD1403).
package gpu

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/member"
	"github.com/rocmdoctor/rocmdoctor/internal/par"
	"github.com/rocmdoctor/rocmdoctor/internal/regfile"
	"github.com/rocmdoctor/rocmdoctor/internal/walk"
	"github.com/rocmdoctor/rocmdoctor/internal/zipx"
)

// Coverage of a required target by a library's code objects.
type Coverage string

const (
	CoverageExact      Coverage = "exact"      // a code object with exactly that target ID
	CoverageCompatible Coverage = "compatible" // usable through the target-ID rules
	CoverageNone       Coverage = "none"
	// CoverageUnknown: no readable code object covers the target, but the
	// library also carries device code whose targets cannot be read (an
	// offload bundle compressed with an unknown method).
	CoverageUnknown Coverage = "unknown"
)

// genericFamilies lists the processors each generic target covers
// (AMDGPUUsage, "Generic Processors").
var genericFamilies = map[string][]string{
	"gfx9-generic":    {"gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"},
	"gfx9-4-generic":  {"gfx940", "gfx941", "gfx942", "gfx950"},
	"gfx10-1-generic": {"gfx1010", "gfx1011", "gfx1012", "gfx1013"},
	"gfx10-3-generic": {"gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036"},
	"gfx11-generic":   {"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153"},
	"gfx12-generic":   {"gfx1200", "gfx1201"},
	"gfx12-5-generic": {"gfx1250", "gfx1251"},
}

// featureOK applies the target-ID rule for one feature: a code object
// built without a setting runs in both modes; "+" needs the feature on and
// "-" needs it off. A requirement without a setting accepts either.
func featureOK(code, want elfx.Feature) bool {
	if code == elfx.FeatureAny || code == elfx.FeatureUnsupported || want == elfx.FeatureAny || want == elfx.FeatureUnsupported {
		return true
	}
	return code == want
}

// TargetCoverage says whether a code object for target ID code can run on
// the required target ID want.
func TargetCoverage(code, want elfx.TargetID) Coverage {
	if code.String() == want.String() {
		return CoverageExact
	}
	procOK := code.Processor == want.Processor
	for _, p := range genericFamilies[code.Processor] {
		procOK = procOK || p == want.Processor
	}
	if procOK && featureOK(code.Xnack, want.Xnack) && featureOK(code.SRAMECC, want.SRAMECC) {
		return CoverageCompatible
	}
	return CoverageNone
}

// CodeSummary counts a library's code objects for one target.
type CodeSummary struct {
	TargetID          string `json:"target_id"`
	Kind              string `json:"kind,omitempty"`
	Container         string `json:"container"`
	CodeObjectVersion int    `json:"code_object_version,omitempty"`
	Count             int    `json:"count"`
}

// Library is one file with device code.
type Library struct {
	Path    string        `json:"path"`
	Targets []string      `json:"targets"`
	Code    []CodeSummary `json:"code_objects"`
	// Coverage maps each matrix column to the library's coverage.
	Coverage map[string]Coverage `json:"coverage"`
	Notes    []string            `json:"notes,omitempty"`
}

// TensileReport describes a rocBLAS/hipBLASLt kernel library directory.
type TensileReport struct {
	Library string `json:"library"` // "rocblas", "hipblaslt"
	Dir     string `json:"dir"`     // the library/ directory, "" when absent
	// Archs maps each architecture found in file names to its files.
	Archs map[string][]string `json:"archs"`
	// Bad lists kernel files that do not parse as code objects for their
	// architecture.
	Bad []string `json:"bad,omitempty"`
}

// Report is the result of Check.
type Report struct {
	SchemaVersion int               `json:"schema_version"`
	Columns       []string          `json:"columns"`
	Libraries     []Library         `json:"libraries"`
	NoDeviceCode  []string          `json:"no_device_code"`
	Tensile       []TensileReport   `json:"tensile,omitempty"`
	MIOpenKDB     map[string]int    `json:"miopen_kdb,omitempty"` // arch → kernel databases
	Expected      []string          `json:"expected,omitempty"`   // from --expect-from
	Findings      []finding.Finding `json:"findings"`
	// Errors are the paths named that could not be read (missing, not a
	// regular file or directory, not an ELF file, archive or code object,
	// malformed); the others are still reported.
	Errors []finding.FileError `json:"errors"`
}

// Options configure Check.
type Options struct {
	// Require lists target IDs the build must run on.
	Require []string
	// ExpectFrom is a CMakeCache.txt whose GPU_TARGETS/AMDGPU_TARGETS the
	// built code is compared with.
	ExpectFrom string
}

// Check walks paths and reports the AMDGPU code objects every ELF file,
// archive member and standalone code object carries, a coverage matrix
// against the required (or found) targets, rocBLAS/hipBLASLt Tensile
// libraries and MIOpen kernel databases.
func Check(ctx context.Context, paths []string, opts Options) (*Report, error) {
	rep := &Report{SchemaVersion: 1, Libraries: []Library{}, NoDeviceCode: []string{}, Findings: []finding.Finding{}, Errors: []finding.FileError{}}
	var required []elfx.TargetID
	for _, r := range opts.Require {
		id, err := elfx.ParseTargetID(r)
		if err != nil {
			return nil, err
		}
		required = append(required, id)
	}
	jobs, err := listJobs(ctx, paths)
	if err != nil {
		return nil, err
	}
	jobs, members, closeWheels := expandWheels(jobs)
	defer closeWheels()
	tensile := NewTensileLayout()
	kdb := map[string]int{}
	read := byName(jobs, tensile, kdb)
	par.For(ctx, len(read), 0, func(i int) { read[i].read() })
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, j := range jobs {
		switch {
		case j.err != nil:
			rep.Errors = append(rep.Errors, finding.FileErrorOf(j.path, j.err))
		case j.skip || !j.ok:
		case len(j.lib.Code) == 0 && len(j.lib.Notes) == 0:
			rep.NoDeviceCode = append(rep.NoDeviceCode, j.path)
		default:
			rep.Libraries = append(rep.Libraries, j.lib)
		}
	}
	rep.matrix(required)
	// Required targets over paths without any device code: nothing there
	// runs on them, and passing would wave through a build whose
	// GPU_TARGETS came out empty. (Paths that could not be read are
	// errors already; Tensile kernels are device code, judged per
	// target by tensile.check.)
	if len(required) > 0 && len(rep.Libraries) == 0 && len(tensile.dirs) == 0 && len(rep.Errors) < len(paths) {
		rep.Findings = append(rep.Findings, NoDeviceCode(paths, required))
	}
	tr, tf := tensile.Check(required, func(p, arch string) bool {
		if m := members[filepath.Clean(p)]; m != nil {
			return MemberCodeObjectFor(m.member, m.raw, p, arch)
		}
		return CodeObjectFor(p, arch)
	})
	rep.Tensile = append(rep.Tensile, tr...)
	rep.Findings = append(rep.Findings, tf...)
	if len(kdb) > 0 {
		rep.MIOpenKDB = kdb
	}
	if opts.ExpectFrom != "" {
		if err := checkExpected(rep, opts.ExpectFrom); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// job is a file to examine. Named ones were given on the command line,
// where what cannot be read is an error; in a walked directory it is
// passed over (or noted).
type job struct {
	path   string
	named  bool
	skip   bool      // not read: a path given that does not exist, or an MIOpen database (told by its name)
	member *zip.File // a wheel's member: path is WHEEL!/NAME, read from raw
	raw    *os.File
	lib    Library
	ok     bool
	err    error // reading it, or stat of a path given
}

// listJobs lists the files under paths in walk order.
func listJobs(ctx context.Context, paths []string) ([]*job, error) {
	var jobs []*job
	for _, root := range paths {
		st, err := os.Stat(root)
		if err != nil || !st.IsDir() {
			jobs = append(jobs, &job{path: root, named: true, err: err, skip: err != nil})
			continue
		}
		err = walk.Dir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if d.Type().IsRegular() {
				jobs = append(jobs, &job{path: p})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return jobs, nil
}

// expandWheels puts a wheel's members where the wheel was (a PyTorch or
// onnxruntime ROCm wheel is the prefix a user runs on): each is a job
// named WHEEL!/MEMBER, also listed in members by its cleaned path (as the
// Tensile layout's paths are). closeWheels closes the wheels opened.
func expandWheels(jobs []*job) (expanded []*job, members map[string]*job, closeWheels func()) {
	members = map[string]*job{}
	var opened []*os.File
	for _, j := range jobs {
		if j.skip || !strings.HasSuffix(j.path, ".whl") {
			expanded = append(expanded, j)
			continue
		}
		raw, zr, err := zipx.OpenFile(j.path)
		if err != nil {
			// A wheel whose members cannot be read is an error, named or
			// walked: passing it over would report a prefix without its
			// device code as complete.
			j.err, j.skip = err, true
			expanded = append(expanded, j)
			continue
		}
		opened = append(opened, raw)
		for _, zf := range zr.File {
			if zf.FileInfo().IsDir() {
				continue
			}
			m := &job{path: zipx.MemberPath(j.path, zf.Name), member: zf, raw: raw}
			members[filepath.Clean(m.path)] = m
			expanded = append(expanded, m)
		}
	}
	return expanded, members, func() {
		for _, f := range opened {
			f.Close()
		}
	}
}

// byName gathers what a name says (MIOpen databases into kdb,
// rocBLAS/hipBLASLt libraries and their Tensile directories into tensile),
// in order, and returns the jobs left to read.
func byName(jobs []*job, tensile *TensileLayout, kdb map[string]int) []*job {
	var read []*job
	for _, j := range jobs {
		if j.skip {
			continue
		}
		p := j.path
		base := filepath.Base(p)
		if strings.HasSuffix(base, ".kdb") || strings.HasSuffix(base, ".kdb.bz2") {
			if a := archOf(base); a != "" {
				kdb[a]++
			}
			j.skip = true
			continue
		}
		// A Tensile kernel file holds one architecture's kernels by
		// design (Kernels.so-000-gfx90a.hsaco, ..._gfx1030.co), and the
		// library loads the file of the GPU it runs on: the Tensile report
		// checks it per architecture. As a matrix row it would be an error
		// for every other required target.
		if tensile.Add(p) && !j.named {
			j.skip = true
			continue
		}
		read = append(read, j)
	}
	return read
}

// read reads the job's device code (the files are read on every core: a
// ROCm prefix is thousands of code objects and libraries, each into its
// own job).
func (j *job) read() {
	if j.member != nil {
		head, err := zipx.Head(j.member, 8)
		if err != nil {
			j.err = fmt.Errorf("%s: %w", j.path, err)
			return
		}
		j.lib, j.ok, j.err = gpuMember(j.path, j.member, j.raw, head)
		return
	}
	j.lib, j.ok, j.err = gpuLibrary(j.path, j.named)
}

// matrix sets the report's columns (the required targets, else every
// target found) and each library's coverage of them, with a finding for
// each required target a library does not cover.
func (rep *Report) matrix(required []elfx.TargetID) {
	if len(required) > 0 {
		for _, r := range required {
			rep.Columns = append(rep.Columns, r.String())
		}
	} else {
		seen := map[string]bool{}
		for _, l := range rep.Libraries {
			for _, t := range l.Targets {
				if !seen[t] {
					seen[t] = true
					rep.Columns = append(rep.Columns, t)
				}
			}
		}
		sort.Strings(rep.Columns)
	}
	for i := range rep.Libraries {
		l := &rep.Libraries[i]
		l.Coverage = map[string]Coverage{}
		for _, col := range rep.Columns {
			want, _ := elfx.ParseTargetID(col)
			l.Coverage[col] = l.cover(want)
		}
		rep.Findings = append(rep.Findings, l.missing(required)...)
	}
}

// cover is the library's coverage of the target want: the best of its
// code objects'.
func (l *Library) cover(want elfx.TargetID) Coverage {
	best := CoverageNone
	for _, t := range l.Targets {
		code, err := elfx.ParseTargetID(t)
		if err != nil {
			continue
		}
		switch TargetCoverage(code, want) {
		case CoverageExact:
			best = CoverageExact
		case CoverageCompatible:
			if best == CoverageNone {
				best = CoverageCompatible
			}
		}
	}
	if best == CoverageNone && l.hasUnreadableCode() {
		best = CoverageUnknown
	}
	return best
}

// deviceFindings are check's device-code findings for the library: what
// of its code could not be read (RD1403, one per reason) and each
// required target none of it runs on (RD1401).
func (l *Library) deviceFindings(required []elfx.TargetID) []finding.Finding {
	var out []finding.Finding
	for _, n := range l.Notes {
		out = append(out, finding.Finding{
			Rule: finding.RuleDeviceCodeUnread, Severity: finding.SeverityWarning, File: l.Path,
			Message: fmt.Sprintf("%s has device code that cannot be read (%s): whether it runs on %s cannot be told", l.Path, strings.TrimPrefix(n, l.Path+": "), targetList(required)),
			Fix:     "if it is damaged (a truncated copy, a section rewritten by a tool that does not know offload bundles), rebuild or reinstall it; `rocmdoctor gpus` on it lists what could be read, `clang-offload-bundler --list` a bundle rocmdoctor cannot decode",
		})
	}
	return append(out, l.missing(required)...)
}

func targetList(ts []elfx.TargetID) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.String()
	}
	return strings.Join(names, ", ")
}

// missing reports each required target none of the library's device code
// runs on.
func (l *Library) missing(required []elfx.TargetID) []finding.Finding {
	var out []finding.Finding
	for _, r := range required {
		if l.cover(r) == CoverageNone {
			out = append(out, finding.Finding{
				Rule: finding.RuleGPUTargetMissing, Severity: finding.SeverityError, File: l.Path,
				Message: fmt.Sprintf("%s has device code for %s but none usable on %s (hipErrorNoBinaryForGpu at run time)", l.Path, strings.Join(l.Targets, ", "), r),
				Fix:     fmt.Sprintf("rebuild it with %s in GPU_TARGETS/AMDGPU_TARGETS (check INSTANCES_ONLY, which ignores GPU_TARGETS)", r.Processor),
			})
		}
	}
	return out
}

// NoDeviceCode is the finding for required targets over paths that hold
// no device code at all.
func NoDeviceCode(paths []string, required []elfx.TargetID) finding.Finding {
	return finding.Finding{
		Rule: finding.RuleGPUTargetMissing, Severity: finding.SeverityError, File: strings.Join(paths, " "),
		Message: fmt.Sprintf("no device code in %s: nothing there runs on %s", strings.Join(paths, ", "), targetList(required)),
		Fix:     "give the directories or libraries that carry the device code (lib/ of the install, librocblas.so and its library/ directory), or check that GPU_TARGETS/AMDGPU_TARGETS were set when it was built",
	}
}

// hasUnreadableCode reports device code whose target is unknown, or that
// could not be read (in full or in part: what was read is not all there
// is); the notes say why (a compressed payload rocmdoctor cannot decode, a
// damaged bundle).
func (l *Library) hasUnreadableCode() bool {
	if len(l.Notes) > 0 {
		return true
	}
	for _, c := range l.Code {
		if c.TargetID == "unknown" {
			return true
		}
	}
	return false
}

// gpuLibrary reads the device code of one file; ok is false for files that
// are neither ELF nor archives.
func gpuLibrary(p string, named bool) (Library, bool, error) {
	lib := Library{Path: p, Targets: []string{}, Code: []CodeSummary{}}
	// What cannot be read is an error for a named file, and for an ELF
	// file or archive that does not parse wherever it is (check reports
	// those too: a truncated library in an install is what a scan is
	// for); in a walked directory a file that cannot be opened, or is
	// neither, is passed over.
	unreadable := func(err error, parsed bool) (Library, bool, error) {
		if named || parsed {
			return lib, false, err
		}
		return lib, false, nil
	}
	pr, err := elfx.OpenProbe(p)
	if err != nil {
		return unreadable(err, false)
	}
	var cos []elfx.CodeObject
	switch pr.Kind() {
	case elfx.KindELF:
		f, err := pr.ELF()
		if err != nil {
			return unreadable(err, true)
		}
		cos, lib.Notes = fileCodeObjects(f, lib.Notes)
	case elfx.KindArchive, elfx.KindThinArchive:
		a, err := pr.ArchiveMembers()
		if err != nil {
			return unreadable(err, true)
		}
		cos, lib.Notes = archiveCodeObjects(a, lib.Notes)
		a.Close()
	default:
		pr.Close()
		return unreadable(fmt.Errorf("%s: not an ELF file, an archive or a wheel", p), false)
	}
	lib.summarize(cos)
	return lib, true, nil
}

// MemberDeviceCode is DeviceCodeFindings for member zf of a wheel (raw),
// named path (WHEEL!/MEMBER), whose first bytes (zipx.Head) are head;
// deviceCode is false for a member without device code or that is not
// an ELF file or archive.
func MemberDeviceCode(path string, zf *zip.File, raw io.ReaderAt, head []byte, required []elfx.TargetID) (fs []finding.Finding, deviceCode bool, err error) {
	lib, ok, err := gpuMember(path, zf, raw, head)
	if err != nil || !ok || len(lib.Code) == 0 && len(lib.Notes) == 0 {
		return nil, false, err
	}
	return lib.deviceFindings(required), true, nil
}

// DeviceCodeFindings are the device-code rules (RD1401, RD1403) for one
// file or archive whose code objects are cos, notes saying what of its
// device code could not be read, and whether it has any.
func DeviceCodeFindings(path string, cos []elfx.CodeObject, notes []string, required []elfx.TargetID) ([]finding.Finding, bool) {
	lib := Library{Path: path, Notes: notes}
	lib.summarize(cos)
	if len(lib.Code) == 0 && len(lib.Notes) == 0 {
		return nil, false
	}
	return lib.deviceFindings(required), true
}

// gpuMember is gpuLibrary for member zf of a wheel (raw), named path
// (WHEEL!/MEMBER), whose first bytes (zipx.Head, at least 8 of them when
// the member has them) are head. Members that are not ELF files or
// archives are passed over from those; the others are extracted
// (member.Open). A member that does not extract is an error: the wheel is
// damaged.
func gpuMember(path string, zf *zip.File, raw io.ReaderAt, head []byte) (Library, bool, error) {
	lib := Library{Path: path, Targets: []string{}, Code: []CodeSummary{}}
	isELF := bytes.HasPrefix(head, []byte("\x7fELF"))
	if !isELF && !bytes.HasPrefix(head, []byte("!<arch>\n")) {
		return lib, false, nil // a thin archive's members are outside the wheel
	}
	r, done, err := member.Open(zf, raw, nil, member.InMemory)
	if err != nil {
		return lib, false, fmt.Errorf("%s: %w", path, err)
	}
	defer done()
	size := int64(zf.UncompressedSize64)
	var cos []elfx.CodeObject
	if isELF {
		f, err := elfx.NewFileSize(r, size, path)
		if err != nil {
			return lib, false, err
		}
		cos, lib.Notes = fileCodeObjects(f, lib.Notes)
	} else {
		a, err := elfx.NewArchiveSize(r, size, path)
		if err != nil {
			return lib, false, err
		}
		cos, lib.Notes = archiveCodeObjects(a, lib.Notes)
		a.Close()
	}
	lib.summarize(cos)
	return lib, true, nil
}

// MemberCodeObjectFor is CodeObjectFor for a wheel's member.
func MemberCodeObjectFor(zf *zip.File, raw io.ReaderAt, p, arch string) bool {
	r, done, err := member.Open(zf, raw, nil, member.InMemory)
	if err != nil {
		return false
	}
	defer done()
	return CodeObjectIn(r, int64(zf.UncompressedSize64), p, arch)
}

// archiveCodeObjects reads the device code of an archive's ELF members;
// what cannot be read is added to notes.
func archiveCodeObjects(a *elfx.Archive, notes []string) ([]elfx.CodeObject, []string) {
	var cos []elfx.CodeObject
	for i := range a.Members {
		if sr, err := a.Open(i); err == nil {
			cos, notes = MemberCodeObjects(a, i, sr, cos, notes)
		}
	}
	return cos, notes
}

// MemberCodeObjects appends the device code of member i of a, open as sr,
// to cos (what cannot be read to notes). Host code (all of most archives)
// is told apart without Open; a member that does not parse is passed over.
func MemberCodeObjects(a *elfx.Archive, i int, sr *io.SectionReader, cos []elfx.CodeObject, notes []string) ([]elfx.CodeObject, []string) {
	if elfx.Sniff(sr) == elfx.KindELF && elfx.ObjectWithoutDeviceCode(sr, sr.Size()) {
		return cos, notes
	}
	f, err := a.OpenELF(i)
	if err != nil {
		return cos, notes
	}
	var c []elfx.CodeObject
	c, notes = fileCodeObjects(f, notes)
	return append(cos, c...), notes
}

// fileCodeObjects is CodeObjects of an ELF file, which it closes.
func fileCodeObjects(f *elfx.File, notes []string) ([]elfx.CodeObject, []string) {
	defer f.Close()
	return CodeObjects(f, notes)
}

// CodeObjects reads the device code of an ELF file; what cannot be read
// is added to notes.
func CodeObjects(f *elfx.File, notes []string) ([]elfx.CodeObject, []string) {
	cos, err := f.GPUCodeObjects()
	if err != nil {
		notes = append(notes, err.Error())
	}
	return cos, notes
}

// summarize counts the library's code objects by target.
func (l *Library) summarize(cos []elfx.CodeObject) {
	for _, s := range elfx.TargetStats(cos) {
		l.Code = append(l.Code, CodeSummary(s))
		if s.TargetID != "unknown" && !slices.Contains(l.Targets, s.TargetID) {
			l.Targets = append(l.Targets, s.TargetID)
		}
	}
	for _, c := range cos {
		if c.Note != "" && c.Container == "compressed-bundle" {
			if !slices.Contains(l.Notes, c.Note) {
				l.Notes = append(l.Notes, c.Note)
			}
		}
	}
}

// archOf extracts "gfx90a" from names like "TensileLibrary_lazy_gfx90a.dat",
// "Kernels.so-000-gfx1030.hsaco" or "gfx90a6e.kdb".
func archOf(name string) string {
	i := strings.Index(name, "gfx")
	if i < 0 {
		return ""
	}
	j := i + 3
	for j < len(name) && (name[j] >= '0' && name[j] <= '9' || name[j] >= 'a' && name[j] <= 'f') {
		j++
	}
	arch := name[i:j]
	// MIOpen's kdb names append the CU count in hex (gfx90a6e, gfx1030_36):
	// the processor is gfx plus 3 or 4 characters.
	for _, n := range []int{7, 6} {
		if len(arch) >= n && knownProcessor(arch[:n]) {
			return arch[:n]
		}
	}
	if knownProcessor(arch) {
		return arch
	}
	return ""
}

func knownProcessor(s string) bool {
	processorsOnce.Do(func() {
		processors = map[string]bool{}
		for m := 0; m < 256; m++ {
			if p := elfx.DecodeAMDGPU(uint32(m), elfx.ELFOSABI_AMDGPU_HSA, 2).Processor; strings.HasPrefix(p, "gfx") {
				processors[p] = true // not "none" or "unknown-0x…"
			}
		}
	})
	return processors[s]
}

// processors are the processor names of LLVM's EF_AMDGPU_MACH table.
var (
	processorsOnce sync.Once
	processors     map[string]bool
)

// TensileLayout is what the names of a scan's files say about
// rocBLAS/hipBLASLt installs: the libraries, and their Tensile kernel
// directories (lib/rocblas/library, lib/hipblaslt/library).
type TensileLayout struct {
	dirs map[string]string // library/ directory → "rocblas", "hipblaslt" or "hipsparselt"
	libs map[string]string // lib/rocblas (where library/ belongs) → librocblas.so path
	// files lists what was added in each library/ directory inside a
	// wheel (WHEEL!/…/library), which cannot be listed from the disk, by
	// their paths below it.
	files map[string][]string
}

// tensileLibs are the libraries that load Tensile kernels from a library/
// directory beside them: lib/rocblas/library, lib/hipblaslt/library,
// lib/hipsparselt/library. Since ROCm 7 the kernels of each architecture
// may be in a subdirectory named for it (library/gfx942/…).
var tensileLibs = []string{"rocblas", "hipblaslt", "hipsparselt"}

func NewTensileLayout() *TensileLayout {
	return &TensileLayout{dirs: map[string]string{}, libs: map[string]string{}, files: map[string][]string{}}
}

// tensilePlace splits a path in a Tensile kernel directory into the
// library/ directory, the library's name and the path below library/
// (NAME or ARCH/NAME); ok is false for other paths.
func tensilePlace(p string) (dir, lib, rel string, ok bool) {
	d, rel := filepath.Dir(p), filepath.Base(p)
	if sub := filepath.Base(d); sub != "library" {
		if filepath.Base(filepath.Dir(d)) != "library" || !knownProcessor(sub) {
			return "", "", "", false
		}
		d, rel = filepath.Dir(d), sub+"/"+rel
	}
	lib = filepath.Base(filepath.Dir(d))
	if filepath.Base(d) != "library" || !slices.Contains(tensileLibs, lib) {
		return "", "", "", false
	}
	return d, lib, rel, true
}

// tensileArch is the architecture of a kernel file at rel below library/:
// its subdirectory's, else the one in its name.
func tensileArch(rel string) string {
	if sub, _, found := strings.Cut(rel, "/"); found {
		return sub
	}
	return archOf(rel)
}

// add notes what path p says, and reports whether p is a kernel file of a
// Tensile directory: one architecture's kernels or index.
func (t *TensileLayout) Add(p string) (kernel bool) {
	base := filepath.Base(p)
	for _, lib := range tensileLibs {
		if strings.HasPrefix(base, "lib"+lib+".so") {
			t.libs[filepath.Join(filepath.Dir(p), lib)] = p
		}
	}
	d, lib, rel, ok := tensilePlace(p)
	if !ok {
		return false
	}
	t.dirs[d] = lib
	if strings.Contains(d, zipx.MemberSep) {
		t.files[d] = append(t.files[d], rel)
	}
	return tensileArch(rel) != ""
}

// TensileKernelArch reports the architecture of a Tensile kernel file
// that must parse as a code object for it (.co, .hsaco), "" for others.
func TensileKernelArch(p string) string {
	_, _, rel, ok := tensilePlace(p)
	if ext := filepath.Ext(p); !ok || ext != ".co" && ext != ".hsaco" {
		return ""
	}
	return tensileArch(rel)
}

// check reports each Tensile directory's architectures, flags a library
// without its directory (built without Tensile), a required target with
// no kernels, and kernel files that parses says are not code objects for
// the architecture in their names.
func (t *TensileLayout) Check(required []elfx.TargetID, parses func(path, arch string) bool) ([]TensileReport, []finding.Finding) {
	var reps []TensileReport
	var out []finding.Finding
	for _, prefixDir := range slices.Sorted(maps.Keys(t.libs)) {
		libPath := t.libs[prefixDir]
		found := false
		for d := range t.dirs {
			found = found || filepath.Dir(d) == prefixDir
		}
		if !found {
			name := filepath.Base(prefixDir)
			reps = append(reps, TensileReport{Library: name, Archs: map[string][]string{}})
			fd := finding.Finding{
				Rule: finding.RuleTensileMissing, Severity: finding.SeverityError, File: libPath,
				Message: fmt.Sprintf("%s has no %s/library directory: it was built without Tensile (it holds no Tensile code), and %s", libPath, prefixDir, tensileConsequence(name, "")),
				Fix:     "rebuild with BUILD_WITH_TENSILE=ON (and Tensile_ARCHITECTURE/GPU_TARGETS for your GPUs)",
			}
			if hasTensileHost(libPath) {
				fd.Message = fmt.Sprintf("%s has no %s/library directory: it was built with Tensile (its code loads TensileLibrary files), but the directory was not installed, and %s", libPath, prefixDir, tensileConsequence(name, ""))
				fd.Fix = "install the build's " + filepath.Base(prefixDir) + "/library directory beside the library (cmake --install, or the package's data files)"
			}
			out = append(out, fd)
		}
	}
	for _, d := range slices.Sorted(maps.Keys(t.dirs)) {
		tr := TensileReport{Library: t.dirs[d], Dir: d, Archs: map[string][]string{}}
		names, inWheel := t.files[d]
		if !inWheel {
			names = listTensileDir(d)
		}
		for _, name := range names {
			a := tensileArch(name)
			if a == "" {
				continue
			}
			tr.Archs[a] = append(tr.Archs[a], name)
			p := filepath.Join(d, filepath.FromSlash(name))
			if TensileKernelArch(p) != "" && !parses(p, a) {
				tr.Bad = append(tr.Bad, name)
			}
		}
		reps = append(reps, tr)
		for _, r := range required {
			if len(tr.Archs[r.Processor]) == 0 {
				have := slices.Sorted(maps.Keys(tr.Archs))
				out = append(out, finding.Finding{
					Rule: finding.RuleTensileMissing, Severity: finding.SeverityError, File: d,
					Message: fmt.Sprintf("%s has Tensile kernels for %s but none for %s: %s", d, strings.Join(have, ", "), r.Processor, tensileConsequence(tr.Library, " on that GPU")),
					Fix:     fmt.Sprintf("rebuild %s with %s in its GPU targets", tr.Library, r.Processor),
				})
			}
		}
		for _, b := range tr.Bad {
			out = append(out, finding.Finding{Rule: finding.RuleTensileMissing, Severity: finding.SeverityWarning, File: filepath.Join(d, b),
				Message: fmt.Sprintf("%s does not parse as a code object for the architecture in its name", filepath.Join(d, b)),
				Fix:     "reinstall the Tensile library files"})
		}
	}
	return reps, out
}

// tensileConsequence says what a library's missing kernels do (where: ""
// or " on that GPU").
// hasTensileHost reports whether the library at path carries Tensile's
// host code: a dynamic symbol of Tensile's namespace, or the name of the
// TensileLibrary files it loads in its read-only data. (A library that
// cannot be read says no.)
func hasTensileHost(path string) bool {
	f, err := elfx.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if syms, err := f.DynamicSymbols(); err == nil {
		for _, s := range syms {
			if s.Defined() && strings.Contains(s.Name, "7Tensile") {
				return true
			}
		}
	}
	found, _ := f.ReadOnlyContains([]byte("TensileLibrary"))
	return found
}

func tensileConsequence(lib, where string) string {
	if lib == "rocblas" {
		return "GEMM calls" + where + " return rocblas_status_excluded_from_build (14)"
	}
	return "its GEMM calls" + where + " find no kernels"
}

// listTensileDir lists the files of a library/ directory and of its
// architecture subdirectories (as ARCH/NAME).
func listTensileDir(d string) []string {
	var names []string
	entries, _ := os.ReadDir(d)
	for _, e := range entries {
		switch {
		case e.Type().IsRegular():
			names = append(names, e.Name())
		case e.IsDir() && knownProcessor(e.Name()):
			sub, _ := os.ReadDir(filepath.Join(d, e.Name()))
			for _, f := range sub {
				if f.Type().IsRegular() {
					names = append(names, e.Name()+"/"+f.Name())
				}
			}
		}
	}
	return names
}

// CodeObjectFor reports whether p is an AMDGPU code object (or a bundle of
// them) containing code for arch.
func CodeObjectFor(p, arch string) bool {
	fh, err := regfile.Open(p)
	if err != nil {
		return false
	}
	defer fh.Close()
	st, err := fh.Stat()
	return err == nil && CodeObjectIn(fh, st.Size(), p, arch)
}

// CodeObjectIn is CodeObjectFor for the size bytes of r, named p.
func CodeObjectIn(r io.ReaderAt, size int64, p, arch string) bool {
	if elfx.Sniff(r) == elfx.KindELF {
		f, err := elfx.NewFileSize(r, size, p)
		return err == nil && f.AMDGPU != nil && f.AMDGPU.Processor == arch
	}
	b, err := elfx.ParseOffloadBundle(r, 0, size)
	if err != nil {
		return false
	}
	for _, e := range b.Entries {
		if id, err := elfx.ParseTargetID(e.TargetID); err == nil && id.Processor == arch {
			return true
		}
	}
	return b.Compressed && len(b.Entries) == 0 // a payload that cannot be read may hold it
}

// checkExpected compares the targets a CMakeCache.txt asked for with the
// targets found.
func checkExpected(rep *Report, cache string) error {
	vars, err := readCMakeCache(cache)
	if err != nil {
		return err
	}
	var want []string
	for _, k := range []string{"GPU_TARGETS", "AMDGPU_TARGETS"} {
		for _, t := range strings.Split(vars[k], ";") {
			if t = strings.TrimSpace(t); t != "" && !slices.Contains(want, t) {
				want = append(want, t)
			}
		}
	}
	rep.Expected = want
	built := map[string]bool{}
	for _, l := range rep.Libraries {
		for _, t := range l.Targets {
			id, _ := elfx.ParseTargetID(t)
			built[id.Processor] = true
		}
	}
	for _, t := range rep.Tensile {
		for arch := range t.Archs {
			built[arch] = true
		}
	}
	instancesOnly := isOn(vars["INSTANCES_ONLY"])
	var missing, extra []string
	for _, t := range want {
		id, err := elfx.ParseTargetID(t)
		if err == nil && !built[id.Processor] {
			missing = append(missing, t)
		}
	}
	for p := range built {
		found := false
		for _, t := range want {
			id, _ := elfx.ParseTargetID(t)
			found = found || id.Processor == p
		}
		if !found {
			extra = append(extra, p)
		}
	}
	sort.Strings(extra)
	if len(missing) == 0 && len(extra) == 0 {
		return nil
	}
	msg := fmt.Sprintf("%s asked for %s", cache, strings.Join(want, ";"))
	if len(missing) > 0 {
		msg += "; no device code was built for " + strings.Join(missing, ", ")
	}
	if len(extra) > 0 {
		msg += "; code was built for " + strings.Join(extra, ", ") + " that was not asked for"
	}
	fix := "check that GPU_TARGETS reached every component"
	if instancesOnly {
		msg += "; INSTANCES_ONLY=ON builds composable_kernel's default target list regardless of GPU_TARGETS"
		fix = "set INSTANCES_ONLY=OFF, or pass the targets the way the component expects"
	}
	if !isOn(vars["DL_KERNELS"]) && len(missing) > 0 {
		msg += "; DL_KERNELS is off, so targets that only have DL instances get none"
	}
	rep.Findings = append(rep.Findings, finding.Finding{Rule: finding.RuleGPUTargetsDiffer, Severity: finding.SeverityError, File: cache, Message: msg, Fix: fix})
	return nil
}

func isOn(v string) bool {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "ON", "1", "TRUE", "YES", "Y":
		return true
	}
	return false
}

// readCMakeCache reads NAME:TYPE=VALUE lines.
func readCMakeCache(p string) (map[string]string, error) {
	fh, err := regfile.Open(p)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "//") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(k, ":")
		vars[name] = v
	}
	return vars, sc.Err()
}
