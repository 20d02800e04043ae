package check

import (
	"archive/zip"
	"bytes"
	"cmp"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rocmdoctor/rocmdoctor/ck"
	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/gpu"
	"github.com/rocmdoctor/rocmdoctor/internal/member"
	"github.com/rocmdoctor/rocmdoctor/internal/par"
	"github.com/rocmdoctor/rocmdoctor/internal/regfile"
	"github.com/rocmdoctor/rocmdoctor/internal/safefile"
	"github.com/rocmdoctor/rocmdoctor/internal/version"
	"github.com/rocmdoctor/rocmdoctor/internal/zipx"
	"github.com/rocmdoctor/rocmdoctor/rpath"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

// SchemaVersion is the version of the Report JSON layout
// (documented in docs/check-json.md).
const SchemaVersion = 1

// Ignore suppresses findings; every non-empty field must match. Globs use
// `*`, `?` and `**` (across directories); a path glob without a slash
// matches the file's base name.
type Ignore struct {
	Rules  []string // rule IDs or names; empty means every rule
	Path   string
	Symbol string // raw or demangled name
	Soname string // the library a finding names (NEEDED, vn_file)
}

// Options configure Run. The zero value checks as this machine's
// loader would load the files: two workers per CPU, no baselines, no GPU
// targets, no interpreter for Python extensions, every rule at its default
// severity.
type Options struct {
	Resolver rpath.Options
	// Workers bounds the parallel scan (0: two per CPU).
	Workers int
	// Glibc and Glibcxx are baselines ("2.28", "3.4.25"); "" disables.
	Glibc, Glibcxx string
	// ExpectRunpath enables RD1204 (DT_RPATH where DT_RUNPATH is expected).
	ExpectRunpath bool
	Ignores       []Ignore
	// Severity overrides by rule ID or name; SeverityOff drops the rule.
	Severity map[string]finding.Severity
	// Baseline holds fingerprints of accepted findings.
	Baseline map[string]bool
	// Progress, when set, is called after each file.
	Progress func(done, total int, path string)
	// WorkDir is the directory whose appearance in an RPATH counts as a
	// build directory (default: the working directory).
	WorkDir string
	// AllowEmpty accepts a directory with nothing to check in it; by
	// default that is one of the report's errors, since a gate that
	// checked nothing would pass an empty or mistaken install.
	AllowEmpty bool
	// GPUTargets are the target IDs the build must run on ("gfx90a",
	// "gfx1100", "gfx90a:xnack+"), as `rocmdoctor gpus --require` takes
	// them: device code in an ELF file or archive with none usable on one
	// is RD1401, a rocBLAS/hipBLASLt Tensile directory without kernels for
	// one RD1402, and no device code in the whole scan RD1401. Empty: the
	// device code is not read.
	GPUTargets []string
	// DlopenStrings enables RD1010: the library names in the read-only
	// data of each file that calls dlopen() are looked up as dlopen()
	// from it would. It reads those files' sections (libLLVM-15.so.1 has
	// 35 MB of .rodata), so it is not on by default.
	DlopenStrings bool
	// Python is the interpreter that imports the Python extension modules
	// of the scan (check --python): each is bound as that program loads
	// it, so only what the interpreter exports is left to it and any other
	// undefined symbol is an error. "" knows no interpreter: a module's
	// undefined symbols are notes (RD1006).
	Python string
	// Programs are the programs the scanned files are used by (check
	// --for), when they are not in the scan: their closures and the names
	// they export count as evidence of how a file is used (RD1006,
	// RD1012). They are read, not reported.
	Programs []string

	// Limits tests lower (export_test.go); 0: the table cache's default,
	// member.InMemory.
	tableBudget int
	inMemory    uint64
	// Test hooks (export_test.go): every file whose symbol table is read,
	// and every file the scan parses when it reaches it (not those it
	// had parsed as a dependency).
	tableRead  func(f *elfx.File)
	scanParsed func(path string)
}

// Report is the result of Run.
type Report struct {
	SchemaVersion int                 `json:"schema_version"`
	Roots         []string            `json:"roots"`
	Files         []string            `json:"files"` // every file checked, sorted
	Findings      []finding.Finding   `json:"findings"`
	Ignored       int                 `json:"ignored"`
	Baselined     int                 `json:"baselined"`
	Interrupted   bool                `json:"interrupted"`
	Errors        []finding.FileError `json:"errors"`
	// Warnings are what the scan worked around (a damaged ld.so.cache:
	// rpath.Options.Warn), each once.
	Warnings []string `json:"warnings,omitempty"`
}

// Count returns the number of findings at or above threshold.
func (r *Report) Count(threshold string) int {
	return finding.CountAtLeast(r.Findings, threshold)
}

type candidate struct {
	path, root string
	// kind is "ck" from the name alone, else "" until a worker has looked
	// inside: "elf", "archive", "wheel", or "" for anything else.
	kind string
	// walked: listed by a directory walk as a regular file, so not a
	// symbolic link (a path named on the command line may be one).
	walked bool
	// perm is the file's permission bits, set when it is opened (for
	// RD1213; permKnown says it was).
	perm      fs.FileMode
	permKnown bool
}

// Run scans roots (files or directories) with every applicable check and
// returns the findings after ignores, severity overrides and the baseline.
// Directories are walked; ELF files, archives, wheels and composable_kernel
// CMake configs are checked, each inode once (a hard link is reported under
// the path that sorts first in walk order). Cancelling ctx stops promptly and
// returns the partial report with Interrupted set.
func Run(ctx context.Context, roots []string, opts Options) (*Report, error) {
	rep := &Report{SchemaVersion: SchemaVersion, Roots: roots, Files: []string{}, Findings: []finding.Finding{}, Errors: []finding.FileError{}}
	// What the resolvers work around is in the report (JSON, SARIF) as
	// well as told to the caller's Warn.
	opts.Resolver.KeepWarnings(&rep.Warnings)
	// Wheels' libraries staged by a check that was killed.
	safefile.SweepDirs("", wheelStagePrefix, opts.Resolver.Warn)
	s, err := newScan(&opts)
	if err != nil {
		return nil, err
	}
	cands, dirs, bad, err := collect(ctx, roots, opts.Resolver.Root)
	if err != nil && ctx.Err() == nil {
		return nil, err
	}
	rep.Errors = append(rep.Errors, bad...)
	for _, c := range cands {
		s.wantCK = s.wantCK || c.kind == "ck"
	}
	s.startCache()
	kept, consumers, found := dedupe(s.checkAll(ctx, cands))
	if !opts.AllowEmpty && ctx.Err() == nil {
		for _, root := range dirs {
			if !found[root] {
				rep.Errors = append(rep.Errors, finding.FileError{Path: root, Error: root + ": nothing to check under it (no ELF file, archive, wheel or composable_kernelConfig.cmake); give the install prefix, or --allow-empty"})
			}
		}
	}
	// A composable_kernel config is checked against the ELF files of the
	// scan that reference CK instances (its consumers), so after all of
	// them are known.
	for _, r := range kept {
		if r.c.kind == "ck" && ctx.Err() == nil {
			r.findings, r.err = ck.CheckInScan(r.c.path, consumers)
		}
	}
	if ctx.Err() == nil {
		if err := s.wide(ctx, kept); err != nil {
			return nil, err
		}
	}
	var gpuTree []finding.Finding
	if len(s.gpuRequired) > 0 && ctx.Err() == nil {
		scans := make([]scannedPath, len(kept))
		for i, r := range kept {
			scans[i] = scannedPath{r.c.path, r.c.root, &r.scanned}
		}
		gpuTree = tensileFindings(scans, roots, s.gpuRequired)
	}
	collectFindings(ctx, rep, kept, gpuTree)
	rep.Interrupted = ctx.Err() != nil
	rep.Findings = applyPolicy(rep, rep.Findings, &opts)
	sort.Strings(rep.Files)
	sort.Slice(rep.Errors, func(i, j int) bool { return rep.Errors[i].Path < rep.Errors[j].Path })
	rep.Findings = sortFindings(rep.Findings)
	return rep, nil
}

// scan is one Run: its options and what it derived from them.
type scan struct {
	*Options
	wantCK      bool // a CK config is in the scan: workers read CK references
	gpuRequired []elfx.TargetID
	cache       *symcheck.TableCache
}

func newScan(opts *Options) (*scan, error) {
	if opts.WorkDir == "" {
		opts.WorkDir, _ = os.Getwd()
	}
	s := &scan{Options: opts}
	for _, t := range opts.GPUTargets {
		id, err := elfx.ParseTargetID(t)
		if err != nil {
			return nil, fmt.Errorf("GPU target %q: %w", t, err)
		}
		s.gpuRequired = append(s.gpuRequired, id)
	}
	return s, nil
}

// startCache makes the table cache the workers share, which keeps each
// library's file facts with its symbol table, and hands it every file the
// resolvers parse: one parse of each file for every worker's resolver.
func (s *scan) startCache() {
	wantCode := len(s.gpuRequired) > 0
	s.cache = symcheck.NewTableCacheWith(symcheck.TableCacheOptions{
		Budget: s.tableBudget,
		Keep: func(f *elfx.File) any {
			if ff := keptFacts(f, wantCode); ff != nil {
				return ff
			}
			return nil // not a nil *fileFacts in a non-nil any
		},
		Observe: s.tableRead,
	})
	if s.Resolver.Files == nil {
		s.Resolver.Files = rpath.NewFileCache()
		s.Resolver.Files.OnParse(s.cache.Add, wantCode || s.wantCK)
	}
}

// result is what a worker found in one candidate (the i-th).
type result struct {
	i int
	c candidate
	scanned
}

// checkAll checks the candidates on the workers. Each file is opened once,
// by a worker: it reads the first bytes to learn what the file is and
// goes on with the same descriptor (a separate sniffing pass opened every
// file twice, on one core). Workers take the next file by index and store
// what they found in its slot: a goroutine handing out jobs and one
// collecting results cost a wake-up per file (a tenth of the workers'
// time over /usr/lib went to waiting for the next job).
func (s *scan) checkAll(ctx context.Context, cands []candidate) []*result {
	workers := s.Workers
	if workers <= 0 {
		// Two per core: a worker that needs a library another is parsing
		// waits for that parse (the shared caches read each file once),
		// and its core idles unless another worker can run (more per core
		// gained nothing).
		workers = 2 * runtime.GOMAXPROCS(0)
	}
	var next atomic.Int64
	got := make([]*result, len(cands))
	var progressMu sync.Mutex
	done := 0
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := symcheck.NewBinderWithCache(rpath.New(s.Resolver), s.cache)
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(cands) {
					return
				}
				c := cands[i]
				r := &result{i: i, c: c}
				if c.kind != "ck" {
					r.scanned = checkFile(ctx, b, c, s)
					r.c.kind = r.kind
				}
				got[i] = r
				if s.Progress != nil {
					progressMu.Lock()
					done++
					s.Progress(done, len(cands), r.c.path)
					progressMu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return got
}

// dedupe keeps, of the files checked, the first path in walk order for
// each inode (a hard link speaks for it), and lists the CK references of
// each file and the walked roots that had something to check.
func dedupe(got []*result) (kept []*result, consumers map[string][]string, found map[string]bool) {
	first := map[elfx.FileID]int{}
	consumers, found = map[string][]string{}, map[string]bool{}
	for _, r := range got {
		if r != nil && r.c.kind == "ck" {
			r.id = statID(r.c.path)
		}
		if r != nil && r.c.kind != "" && r.c.walked {
			found[r.c.root] = true
		}
		if r == nil || r.c.kind == "" {
			continue
		}
		if r.id != (elfx.FileID{}) {
			if _, dup := first[r.id]; dup {
				continue
			}
			first[r.id] = r.i
		}
		if len(r.ckRefs) > 0 {
			consumers[r.c.path] = r.ckRefs
		}
		kept = append(kept, r)
	}
	return kept, consumers, found
}

// wide runs the scan-wide evidence pass over the kept files and the
// programs given with --for (read, not reported).
func (s *scan) wide(ctx context.Context, kept []*result) error {
	files := make([]*scanned, len(kept))
	for i, r := range kept {
		files[i] = &r.scanned
	}
	b := symcheck.NewBinderWithCache(rpath.New(s.Resolver), s.cache)
	for _, p := range s.Programs {
		sc := checkFile(ctx, b, newCandidate(p, filepath.Dir(p), false), s)
		if sc.err == nil && (sc.elf == nil || !sc.elf.program) {
			sc.err = errors.New("not a dynamically linked program")
		}
		if sc.err != nil {
			return fmt.Errorf("--for %s: %w", p, sc.err)
		}
		sc.findings = nil
		files = append(files, &sc)
	}
	scanWide(ctx, b, files)
	return nil
}

// collectFindings puts the kept files, their errors and their findings
// (each with its path relative to its root), then the scan-wide GPU
// findings, into rep.
func collectFindings(ctx context.Context, rep *Report, kept []*result, gpuTree []finding.Finding) {
	nf := len(gpuTree)
	for _, r := range kept {
		nf += len(r.findings)
	}
	rep.Files, rep.Findings = make([]string, 0, len(kept)), make([]finding.Finding, 0, nf)
	for _, r := range kept {
		if r.err != nil {
			if ctx.Err() != nil {
				continue
			}
			rep.Errors = append(rep.Errors, finding.FileErrorOf(r.c.path, r.err))
		}
		rep.Files = append(rep.Files, r.c.path)
		rel, relOf := "", ""
		for _, f := range r.findings {
			if f.File != relOf || rel == "" {
				rel, relOf = relTo(r.c.root, f.File), f.File
			}
			f.RelPath = rel
			rep.Findings = append(rep.Findings, f)
		}
	}
	rep.Findings = append(rep.Findings, gpuTree...)
}

// sortFindings orders findings by file, rule ID, symbol, library, version
// and message, stably. It sorts their indices and then moves each finding
// once: a finding is some 300 bytes, and a stable sort that swaps them
// moved ~100 MB for the 3,000 findings over /usr/lib/x86_64-linux-gnu.
//
// Files are compared by rank: a file's findings come together, so its
// path is compared with the others once per file rather than in every
// comparison of the sort (paths share long prefixes).
func sortFindings(fs []finding.Finding) []finding.Finding {
	idx := make([]int32, len(fs))
	var files []string
	for i := range idx {
		idx[i] = int32(i)
		if i == 0 || fs[i].File != fs[i-1].File {
			files = append(files, fs[i].File)
		}
	}
	slices.Sort(files)
	files = slices.Compact(files)
	rank := make([]int32, len(fs))
	for i := range fs {
		if i > 0 && fs[i].File == fs[i-1].File {
			rank[i] = rank[i-1]
			continue
		}
		r, _ := slices.BinarySearch(files, fs[i].File)
		rank[i] = int32(r)
	}
	slices.SortStableFunc(idx, func(i, j int32) int {
		a, b := &fs[i], &fs[j]
		return cmp.Or(cmp.Compare(rank[i], rank[j]), strings.Compare(a.ID, b.ID),
			strings.Compare(a.Symbol, b.Symbol), strings.Compare(a.Library, b.Library),
			strings.Compare(a.Version, b.Version), strings.Compare(a.Message, b.Message))
	})
	out := make([]finding.Finding, len(fs))
	for k, i := range idx {
		out[k] = fs[i]
	}
	return out
}

// relTo is p relative to the scan root it was found under, or p when it
// lies outside it.
func relTo(root, p string) string {
	// A wheel member's name is shown as it is ("pkg/../../x.py" is the
	// finding), only the wheel's path made relative.
	if i := strings.Index(p, ".whl"+zipx.MemberSep); i >= 0 {
		i += len(".whl")
		return relTo(root, p[:i]) + p[i:]
	}
	// The walk joins clean names to a clean root: most paths are the
	// root, a slash and the rest (without the two cleanings and the split
	// that Abs and Rel cost each of the thousands of findings' files).
	if n := len(root); len(p) > n+1 && p[n] == '/' && p[:n] == root && !strings.HasPrefix(p[n+1:], "..") &&
		filepath.IsAbs(root) && filepath.Clean(root) == root && filepath.Clean(p) == p {
		return p[n+1:]
	}
	return relAbs(root, p)
}

// relAbs is relTo for any root and path: both made absolute, then
// filepath.Rel.
func relAbs(root, p string) string {
	if a, err := filepath.Abs(root); err == nil {
		root = a
	}
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		if r == "." {
			return filepath.Base(p)
		}
		return r
	}
	return p
}

func statID(path string) elfx.FileID {
	st, err := os.Stat(path)
	if err != nil {
		return elfx.FileID{}
	}
	return elfx.IDOf(st)
}

// collect lists the regular files under roots in walk order (lexical per
// directory); what each holds is for the workers to find out. dirs are the
// roots that are directories. Under a sysroot, the roots' symbolic links
// are followed inside it (rpath.RealInRoot).
//
// A root that does not exist or is neither a directory nor a regular file
// is one of the errors returned beside the list, so the other roots are
// still checked (as a file that turns out unreadable is).
func collect(ctx context.Context, roots []string, sysroot string) (out []candidate, dirs []string, bad []finding.FileError, err error) {
	for _, root := range roots {
		if sysroot != "" {
			// Inside a sysroot, a root's symbolic links lead inside it
			// (/opt/rocm -> /etc/alternatives/rocm -> /opt/rocm-6.2.0 in
			// a ROCm image), not to this machine's files.
			real, err := rpath.RealInRoot(sysroot, root)
			if err != nil {
				bad = append(bad, finding.FileErrorOf(root, err))
				continue
			}
			root = real
		}
		st, err := os.Stat(root)
		if err != nil {
			bad = append(bad, finding.FileErrorOf(root, err))
			continue
		}
		if !st.IsDir() {
			if !st.Mode().IsRegular() {
				bad = append(bad, finding.FileErrorOf(root, regfile.NotRegular(root, st.Mode())))
				continue
			}
			out = append(out, newCandidate(root, filepath.Dir(root), false))
			continue
		}
		dirs = append(dirs, root)
		got, err := walkParallel(ctx, root)
		out = append(out, got...)
		if err != nil {
			return out, dirs, bad, err
		}
	}
	return out, dirs, bad, nil
}

func newCandidate(p, root string, walked bool) candidate {
	kind := ""
	if filepath.Base(p) == "composable_kernelConfig.cmake" {
		kind = "ck"
	}
	return candidate{path: p, root: root, kind: kind, walked: walked}
}

// walkParallel lists the regular files under root in filepath.WalkDir's
// order (lexical, a directory's files where the directory is), walking
// the subdirectories of root on all cores: a library directory is a few
// hundred directories, and walking them is the scan's one serial part.
func walkParallel(ctx context.Context, root string) ([]candidate, error) {
	// A root named on the command line is followed when it is a symbolic
	// link to a directory (/opt/rocm -> /opt/rocm-6.2.0), as find -H does;
	// links below it are not. An unreadable directory is skipped, after
	// the entries read before the error, as WalkDir does.
	entries, _ := os.ReadDir(root)
	parts := make([][]candidate, len(entries))
	errs := make([]error, len(entries))
	par.For(ctx, len(entries), 0, func(i int) {
		e := entries[i]
		p := filepath.Join(root, e.Name())
		switch {
		case e.Type().IsRegular():
			parts[i] = []candidate{newCandidate(p, root, true)}
		case e.IsDir():
			parts[i], errs[i] = walkFiles(ctx, p, root, nil)
		}
	})
	var out []candidate
	for i, p := range parts {
		out = append(out, p...)
		if errs[i] != nil {
			return out, errs[i]
		}
	}
	return out, ctx.Err()
}

// walkFiles appends the regular files under dir, a clean path, to out in
// filepath.WalkDir's order (lexical; symbolic links not followed; an
// unreadable directory skipped after the entries read before the error),
// joining names to their directory's path as filepath.Join would (dir is
// clean, so nothing needs cleaning: the walk of /usr/lib/x86_64-linux-gnu
// cleaned 5,000 paths that way).
func walkFiles(ctx context.Context, dir, root string, out []candidate) ([]candidate, error) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		p := dir + "/" + e.Name()
		switch {
		case e.Type().IsRegular():
			out = append(out, newCandidate(p, root, true))
		case e.IsDir():
			var err error
			if out, err = walkFiles(ctx, p, root, out); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// scanned is what a worker found in one file.
type scanned struct {
	kind     string // "" for a file none of the checks applies to
	id       elfx.FileID
	findings []finding.Finding
	err      error
	ckRefs   []string // undefined CK instance functions (when a CK config is in the scan)
	// With GPU targets: whether the file carries device code, and for a
	// Tensile kernel file (kind "tensile") whether it parses as a code
	// object for the architecture in its name.
	deviceCode, tensileOK bool
	// elf is what the scan-wide rules need (scanWide), for an ELF file
	// that was bound.
	elf *elfScan
}

// checkFile opens c once, decides from its first bytes what it is, and
// runs the checks for that kind. A file that could not be opened is
// skipped, as a walk skips it.
func checkFile(ctx context.Context, b *symcheck.Binder, c candidate, opts *scan) (sc scanned) {
	p, err := elfx.OpenProbe(c.path)
	if err != nil {
		// Unreadable (or gone since the walk): reported, not passed over.
		sc.kind, sc.err = "unreadable", err
		return sc
	}
	sc.id = elfx.IDOf(p.Info)
	if m := p.Info.Mode(); m.IsRegular() {
		c.perm, c.permKnown = m.Perm(), true
	}
	wantGPU := len(opts.gpuRequired) > 0
	if wantGPU && c.walked {
		if arch := gpu.TensileKernelArch(c.path); arch != "" {
			// One architecture's Tensile kernels: judged with its
			// directory (tensileFindings), not against every target.
			sc.kind, sc.tensileOK = "tensile", gpu.CodeObjectIn(p, p.Info.Size(), c.path, arch)
			p.Close()
			return sc
		}
	}
	k := p.Kind()
	switch {
	case k == elfx.KindELF:
		checkELFCandidate(ctx, b, c, p, opts, &sc)
	case k == elfx.KindArchive || k == elfx.KindThinArchive:
		checkArchiveCandidate(ctx, c, p, opts, &sc)
	case bytes.HasPrefix(p.Head, []byte("PK\x03\x04")) && strings.HasSuffix(c.path, ".whl"):
		sc.kind = "wheel"
		sc.findings, sc.deviceCode, sc.err = checkWheel(ctx, p, opts)
		p.Close()
	default:
		p.Close()
		if !c.walked {
			// Named on the command line: say that nothing was checked.
			sc.kind, sc.err = "other", errors.New("not an ELF file, an archive, a wheel or a composable_kernelConfig.cmake: nothing to check")
		}
	}
	return sc
}

// checkELFCandidate checks an ELF file of the scan, open as p: with the
// table and facts kept when the scan parsed it as a dependency, or parsed
// for what the loader reads (more when device code, CK references or
// dlopen strings are wanted).
func checkELFCandidate(ctx context.Context, b *symcheck.Binder, c candidate, p *elfx.Probe, opts *scan, sc *scanned) {
	wantGPU := len(opts.gpuRequired) > 0
	sc.kind = "elf"
	// A library the scan has already parsed as another file's
	// dependency (same device and inode) is not parsed again: its
	// table holds what the file-level rules need, and its device code
	// when the scan has GPU targets.
	if t, ok := b.Tables().Lookup(sc.id, c.path); ok && factsIn(t) != nil && !opts.wantCK && !opts.DlopenStrings && (!wantGPU || factsIn(t).codeRead) {
		p.Close()
		if opts.Resolver.Files != nil {
			opts.Resolver.Files.KnowStat(c.path, p.Info)
		}
		needs := func() ([]elfx.VersionNeed, error) { return t.VersionNeeds(), nil }
		var gf []finding.Finding
		if wantGPU {
			gf, sc.deviceCode = gpu.DeviceCodeFindings(c.path, factsIn(t).code, nil, opts.gpuRequired)
		}
		sc.findings, sc.err = checkELF(ctx, b, nil, t, factsIn(t), needs, c, opts, sc)
		sc.findings = append(sc.findings, gf...)
		return
	}
	if opts.scanParsed != nil {
		opts.scanParsed(c.path)
	}
	// What the loader reads, unless device code or CK instances are
	// wanted too: the section headers were a fifth of what a scan
	// allocated (the dynamic symbol tables are found through the
	// dynamic segment, as ld.so finds them).
	open := p.ELFSegments
	if wantGPU || opts.wantCK || opts.DlopenStrings {
		open = p.ELF
	}
	f, err := open()
	if err == nil {
		if err = f.SectionHeaderError(); err != nil {
			f.Close()
		}
	}
	if err != nil {
		sc.err = err
		return
	}
	var gf []finding.Finding
	if wantGPU {
		cos, notes := gpu.CodeObjects(f, nil)
		gf, sc.deviceCode = gpu.DeviceCodeFindings(c.path, cos, notes, opts.gpuRequired)
	}
	sc.findings, sc.err = checkELF(ctx, b, f, nil, factsOf(f), f.VersionNeeds, c, opts, sc)
	sc.findings = append(sc.findings, gf...)
}

// checkArchiveCandidate checks an archive of the scan, open as p: the
// LLVMInitialize* diagnosis when it holds LLVM or MLIR code, and its
// members' device code with GPU targets, reading the archive once.
func checkArchiveCandidate(ctx context.Context, c candidate, p *elfx.Probe, opts *scan, sc *scanned) {
	wantGPU := len(opts.gpuRequired) > 0
	sc.kind = "archive"
	// The LLVMInitialize* diagnosis is the one archive check in a
	// prefix scan; it runs on archives that hold LLVM or MLIR code.
	// With GPU targets, the members' device code is read too
	// (composable_kernel's device libraries are archives).
	// The archive is read once for both, member by member.
	related, err := llvmRelated(p)
	if err != nil || (!related && !wantGPU) {
		p.Close()
		sc.err = err
		return
	}
	a, err := p.ArchiveMembers()
	if err != nil {
		sc.err = err
		return
	}
	defer a.Close()
	var li *symcheck.LinkInputs
	if related {
		li = symcheck.NewLinkInputs("LLVMInitialize") // only these names matter to the diagnosis
	}
	var cos []elfx.CodeObject
	var notes []string
	for i := range a.Members {
		if err := ctx.Err(); err != nil {
			sc.err = err
			return
		}
		// A member that cannot be read is the file's error for the
		// diagnosis; the device code of the others is still read.
		sr, err := a.Open(i)
		if err == nil && li != nil {
			err = li.AddMember(a, i, sr)
		}
		if err != nil && li != nil {
			sc.err, li = err, nil
		}
		if sr != nil && wantGPU {
			cos, notes = gpu.MemberCodeObjects(a, i, sr, cos, notes)
		}
	}
	if wantGPU {
		sc.findings, sc.deviceCode = gpu.DeviceCodeFindings(c.path, cos, notes, opts.gpuRequired)
	}
	if li != nil {
		res := li.Result()
		sc.findings = append(sc.findings, llvmFinding(c.path, symcheck.DiagnoseLLVM(res.UnresolvedNames(), func(n string) bool { return res.Defined[n] }, nil))...)
	}
}

// scannedPath is a checked file as tensileFindings sees it.
type scannedPath struct {
	path, root string
	sc         *scanned
}

// tensileFindings are the scan-wide GPU findings: the rocBLAS/hipBLASLt
// Tensile directories the scan's paths reveal (kernel files judged by what
// the workers found, RD1402), and no device code anywhere (RD1401), each
// with its path relative to the root it was found under.
func tensileFindings(scans []scannedPath, roots []string, required []elfx.TargetID) []finding.Finding {
	layout := gpu.NewTensileLayout()
	parsed := map[string]bool{}
	rootOf := map[string]string{}
	deviceCode := false
	for _, s := range scans {
		layout.Add(s.path)
		rootOf[s.path], rootOf[filepath.Dir(s.path)] = s.root, s.root
		if s.sc.kind == "tensile" {
			parsed[s.path] = s.sc.tensileOK
		}
		deviceCode = deviceCode || s.sc.deviceCode
	}
	reports, out := layout.Check(required, func(p, arch string) bool {
		if ok, seen := parsed[p]; seen {
			return ok
		}
		return gpu.CodeObjectFor(p, arch) // in the directory, not in the scan
	})
	for _, r := range reports {
		deviceCode = deviceCode || len(r.Archs) > 0
	}
	for i := range out {
		root, ok := rootOf[out[i].File]
		if !ok {
			root = rootOf[filepath.Dir(out[i].File)]
		}
		out[i].RelPath = relTo(root, out[i].File)
	}
	if !deviceCode && len(scans) > 0 {
		// About the whole scan: filed under the first root (SARIF and
		// JUnit want one path), the message names them all.
		f := gpu.NoDeviceCode(roots, required)
		f.File, f.RelPath = roots[0], roots[0]
		out = append(out, f)
	}
	return out
}

// checkELF runs the hygiene rules and binds the dynamic symbols of the file
// ff describes, whose version requirements needs reads. f is the open
// file, which it closes, or nil when the file was parsed before (as a
// dependency) and ff comes from its cached table t.
func checkELF(ctx context.Context, b *symcheck.Binder, f *elfx.File, t *symcheck.Table, ff *fileFacts, needs func() ([]elfx.VersionNeed, error), c candidate, opts *scan, sc *scanned) ([]finding.Finding, error) {
	// The references to composable_kernel instances, for a CK install in
	// the scan, are read now, from the open file and its table.
	ckRefs := func(t *elfx.SymbolTable) {
		if opts.wantCK && f != nil {
			sc.ckRefs, _ = ck.ReferencesOf(f, t)
		}
	}
	closeFile := func() {
		if f != nil {
			f.Close()
		}
	}
	notExec := ""
	if c.permKnown && c.perm&0o111 == 0 && ff.program() {
		notExec = "its mode is " + c.perm.String()
	}
	out, err := hygiene(ff, needs, c.path, notExec, opts)
	if err != nil {
		closeFile()
		return out, err
	}
	if ff.typ != elf.ET_DYN && ff.typ != elf.ET_EXEC {
		ckRefs(nil)
		closeFile()
		return out, nil
	}
	d, derr := ff.dyn, ff.dynErr
	if derr != nil {
		ckRefs(nil)
		closeFile()
		return out, nil
	}
	module, python := symcheck.ModuleKind(ff.typ, ff.hasInterp, d, c.path)
	if f != nil {
		b.Prime(f)
		var ok bool
		if t, ok = b.Tables().LookupFile(f); !ok {
			// Dropped already under the cache's budget (or not
			// readable, which binding reports).
			t, _ = b.Tables().Read(f)
		}
		if t != nil {
			ckRefs(t.Symbols())
		} else {
			ckRefs(nil)
		}
		if opts.DlopenStrings && t != nil && t.Symbols().CallsDlopen() {
			names, err := f.DlopenNames()
			if err != nil {
				f.Close()
				return out, err
			}
			ff.dlopen.Names = names
		}
		f.Close()
	}
	if t != nil && ff.typ == elf.ET_DYN && !t.Symbols().Searched() {
		if n := t.Symbols().Counts().Defined; n > 0 {
			r, _ := finding.LookupRule(finding.RuleUnsearched)
			out = append(out, finding.Finding{Rule: finding.RuleUnsearched, Severity: r.Severity, File: c.path, Fix: r.Fix,
				Message: fmt.Sprintf("%s defines %d dynamic symbol(s), but ld.so looks up none of them: its dynamic section names no symbol hash table with buckets (DT_GNU_HASH or DT_HASH)", c.path, n)})
		}
	}
	if c.walked && opts.Resolver.Files != nil {
		opts.Resolver.Files.KnowNotLink(c.path)
	}
	bf, dr, err := bindFindings(ctx, b, c.path, ff, module, python, opts)
	if dr != nil {
		sc.elf = scanOf(c.path, sc.id, ff, dr)
		// Bound in its interpreter: what is left is no guess.
		sc.elf.boundInHost = python && opts.Python != ""
	}
	if len(out) == 0 {
		return bf, err
	}
	return append(out, bf...), err
}

// bindFindings binds the file at path (facts ff; a loadable module, and a
// Python extension, as ModuleKind says) as the loader would and reports
// what does not resolve: undefined symbols and versions, missing
// libraries, the LLVMInitialize* diagnosis, dlopen() names and unwinders.
// A Python extension is bound in opts.Python when it is set, so that only
// what the interpreter exports is left to it.
func bindFindings(ctx context.Context, b *symcheck.Binder, path string, ff *fileFacts, module, python bool, opts *scan) ([]finding.Finding, *symcheck.DynamicResult, error) {
	host := ""
	if python {
		host = opts.Python
	}
	inHost := host != ""
	dr, err := b.BindLoaded(ctx, host, path)
	if err != nil {
		return nil, nil, err
	}
	var unresolved []string
	out := dr.Findings[:0] // rewritten in place: each is written at or before where it was read
	for _, fd := range dr.Findings {
		if fd.Rule == finding.RuleUndefinedSymbol && fd.File == path {
			switch {
			case inHost:
				fd.Message += fmt.Sprintf(" — neither %s (which imports the module) nor the module's libraries define it", opts.Python)
			case module:
				symcheck.AsModuleNote(&fd, path, python)
			}
		}
		if fd.Rule == finding.RuleUndefinedSymbol {
			unresolved = append(unresolved, fd.Symbol)
		}
		out = append(out, fd)
	}
	out = append(out, llvmFinding(path, symcheck.DiagnoseLLVM(unresolved, dr.Defined, nil))...)
	out = append(out, symcheck.DlopenFindings(b.Resolver(), dr.Closure, path, &ff.dlopen)...)
	uw, err := b.UnwindFindings(dr.Closure, path, false)
	if err != nil {
		return out, dr, err
	}
	// Unwinder problems are reported for the file whose closure has them;
	// a static copy is reported once, on the library that carries it.
	for _, fd := range uw.Findings {
		if fd.Rule == finding.RuleExportsUnwinder && fd.File != path {
			continue
		}
		out = append(out, fd)
	}
	return out, dr, nil
}

// llvmRelated reports whether an archive's symbol index defines LLVM or
// MLIR code (C API, llvm::, mlir:: names): only such archives can carry the
// LLVMInitialize* gap, and reading the index is cheap.
func llvmRelated(p *elfx.Probe) (bool, error) {
	related := false
	ok, err := elfx.EachIndexNames(p, p.Info.Size(), p.Path, func(names []byte) bool {
		related = symcheck.HoldsLLVMName(names)
		return !related
	})
	if ok || err != nil {
		return related, err
	}
	// A BSD index, or none.
	a, err := elfx.OpenArchive(p.Path)
	if err != nil {
		return false, err
	}
	defer a.Close()
	for _, sym := range a.Symbols {
		if symcheck.HoldsLLVMName([]byte(sym.Name)) {
			return true, nil
		}
	}
	return false, nil
}

func llvmFinding(path string, d *symcheck.LLVMDiagnosis) []finding.Finding {
	if d == nil {
		return nil
	}
	var targets []string
	for _, t := range d.Missing {
		targets = append(targets, t.Target)
	}
	return []finding.Finding{{Rule: finding.RuleLLVMTargets, Severity: finding.SeverityError, File: path, Symbol: "LLVMInitialize" + strings.Join(targets, ",") + "*",
		Message: d.Message, Fix: d.Fix}}
}

var soFile = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^lib.*\.so(\.[0-9.]+)?$)|(\.so(\.[0-9]+)*$)`) })

// hygiene runs the file-level rules RD1201–RD1209 and RD1211–RD1213;
// notExec says why the file cannot be executed ("" when it can).
func hygiene(ff *fileFacts, versionNeeds func() ([]elfx.VersionNeed, error), path, notExec string, opts *scan) ([]finding.Finding, error) {
	var out []finding.Finding
	add := func(rule, msg, sym, lib string) {
		r, _ := finding.LookupRule(rule)
		out = append(out, finding.Finding{Rule: rule, Severity: r.Severity, File: path, Symbol: sym, Library: lib, Message: msg, Fix: r.Fix})
	}
	if ff.typ != elf.ET_DYN && ff.typ != elf.ET_EXEC {
		return nil, nil
	}
	// A malformed PT_INTERP (the loader could not start the program) is
	// the file's error.
	if ff.interpErr != nil {
		return nil, ff.interpErr
	}
	if ff.interp != "" && isBuildDir(ff.interp, opts.WorkDir) {
		add(finding.RuleBuildDirInterp, fmt.Sprintf("%s: program interpreter %q lies in a build or temporary directory", path, ff.interp), "", ff.interp)
	}
	if notExec != "" && ff.program() {
		add(finding.RuleProgramNotExec, fmt.Sprintf("%s is a program, but %s: running it fails with \"Permission denied\"", path, notExec), "", "")
	}
	d, err := ff.dyn, ff.dynErr
	if err != nil && !errors.Is(err, elfx.ErrNoDynamic) {
		return nil, err
	}
	if st := ff.stack; st.Executable && ff.machine != elf.EM_AMDGPU {
		why := "PT_GNU_STACK has PF_X"
		if !st.Present {
			why = "there is no PT_GNU_STACK, so the stack defaults to executable"
		}
		add(finding.RuleExecStack, fmt.Sprintf("%s: executable stack (%s)", path, why), "", "")
	}
	if d == nil {
		return out, nil
	}
	check := func(tag string, entries []string) {
		for _, e := range entries {
			switch {
			case e == "":
				add(finding.RuleRelativeRunpath, fmt.Sprintf("%s: %s has an empty entry, which means the working directory", path, tag), "", e)
			case rpath.OriginRelative(e):
			case soFile().MatchString(filepath.Base(e)) && !strings.HasSuffix(e, "/"):
				add(finding.RuleFileNameRunpath, fmt.Sprintf("%s: %s entry %q is a file name, not a directory", path, tag, e), "", e)
			case !strings.HasPrefix(e, "/"):
				// Other tokens expand to relative paths ($LIB to lib64,
				// $PLATFORM to haswell) and unknown ones stay literal.
				add(finding.RuleRelativeRunpath, fmt.Sprintf("%s: %s entry %q is relative to the working directory", path, tag, e), "", e)
			case isBuildDir(e, opts.WorkDir):
				add(finding.RuleBuildDirRunpath, fmt.Sprintf("%s: %s entry %q points into a build or temporary directory", path, tag, e), "", e)
			}
		}
	}
	check("RPATH", d.RPathList())
	check("RUNPATH", d.RunPathList())
	if opts.ExpectRunpath && d.HasRPath && !d.HasRunPath {
		add(finding.RuleRPathNotRunpath, fmt.Sprintf("%s: DT_RPATH %q where DT_RUNPATH is expected", path, d.RPath), "", "")
	}
	if library, _ := symcheck.Unnamed(ff.typ, ff.hasInterp, d, path); library {
		add(finding.RuleMissingSoname, fmt.Sprintf("%s: shared library without DT_SONAME", path), "", "")
	}
	for _, n := range d.Needed {
		switch {
		case !strings.Contains(n, "/"):
		case rpath.OriginRelative(n):
			// "$ORIGIN/../lib/libpython3.12.so.1.0": ld.so expands it
			// (python-build-standalone links this way); relocatable.
		case strings.HasPrefix(n, "/"):
			add(finding.RuleNeededPath, fmt.Sprintf("%s: NEEDED entry %q is a path: ld.so opens that file and no other, without searching RUNPATH, LD_LIBRARY_PATH or the cache", path, n), "", n)
		default:
			add(finding.RuleNeededPath, fmt.Sprintf("%s: NEEDED entry %q is a relative path: ld.so opens it against the working directory of the process, without searching for it", path, n), "", n)
		}
	}
	if d.TextRel {
		add(finding.RuleTextRel, fmt.Sprintf("%s: text relocations (DT_TEXTREL)", path), "", "")
	}
	if opts.Glibc != "" || opts.Glibcxx != "" {
		needs, err := versionNeeds()
		if err != nil {
			return out, err
		}
		var glibc, glibcxx string
		for _, n := range needs {
			for _, v := range n.Versions {
				if s, ok := strings.CutPrefix(v.Name, "GLIBC_"); ok && opts.Glibc != "" && version.Less(opts.Glibc, s) && (glibc == "" || version.Less(glibc, s)) {
					glibc = s
				}
				if s, ok := strings.CutPrefix(v.Name, "GLIBCXX_"); ok && opts.Glibcxx != "" && version.Less(opts.Glibcxx, s) && (glibcxx == "" || version.Less(glibcxx, s)) {
					glibcxx = s
				}
			}
		}
		if glibc != "" {
			add(finding.RuleGlibcTooNew, fmt.Sprintf("%s requires GLIBC_%s, newer than the baseline %s", path, glibc, opts.Glibc), "", "GLIBC_"+glibc)
		}
		if glibcxx != "" {
			add(finding.RuleGlibcxxTooNew, fmt.Sprintf("%s requires GLIBCXX_%s, newer than the baseline %s", path, glibcxx, opts.Glibcxx), "", "GLIBCXX_"+glibcxx)
		}
	}
	return out, nil
}

// fileFacts is what the file-level rules read from an ELF file. It is
// kept with the file's symbol table, so a library parsed as another file's
// dependency is not parsed again when the scan reaches it.
type fileFacts struct {
	typ       elf.Type
	machine   elf.Machine
	hasInterp bool   // a PT_INTERP (a program or PIE, not a plain library)
	interp    string // its path
	hasText   bool   // an executable PT_LOAD with bytes in the file
	interpErr error
	dyn       *elfx.Dynamic
	dynErr    error
	stack     elfx.Stack
	// code is the file's device code, read (codeRead) when the scan has
	// GPU targets.
	code     []elfx.CodeObject
	codeRead bool
	// dlopen: the file's dlopen metadata notes (and, with
	// Options.DlopenStrings, the library names it holds).
	dlopen symcheck.DlopenFacts
}

// program reports whether the file is one to run rather than to load: an
// ET_EXEC file with a program interpreter, or a static one for this
// machine (firmware images in /usr/lib/firmware are static ET_EXEC files
// for the devices' processors, installed without execute permission), or
// a position-independent executable (ET_DYN marked DF_1_PIE, as linkers
// have marked PIEs since binutils 2.26, and without a SONAME). A program
// interpreter alone does not make one: glibc's libc.so.6 and libcap's
// pam_cap.so have one so that they print something when run, and are
// loaded, not run. A file without code in its executable segments (a
// separate debug file, /usr/lib/debug/…) is none.
func (ff *fileFacts) program() bool {
	switch {
	case !ff.hasText:
		return false
	case ff.typ == elf.ET_EXEC:
		return ff.hasInterp || slices.Contains(hostMachines(), ff.machine)
	}
	return ff.typ == elf.ET_DYN && ff.dyn != nil && !ff.dyn.HasSoname && ff.dyn.Flags1&elf.DF_1_PIE != 0
}

// hostMachines are the ELF machines whose static programs this machine
// runs: by the kernel's machine (uname), else by the build's GOARCH.
var hostMachines = sync.OnceValue(func() []elf.Machine {
	byKernel := map[string][]elf.Machine{
		"x86_64": {elf.EM_X86_64, elf.EM_386}, "i386": {elf.EM_386}, "i486": {elf.EM_386}, "i586": {elf.EM_386}, "i686": {elf.EM_386},
		"aarch64": {elf.EM_AARCH64, elf.EM_ARM}, "armv7l": {elf.EM_ARM}, "armv8l": {elf.EM_ARM},
		"ppc64le": {elf.EM_PPC64}, "ppc64": {elf.EM_PPC64}, "s390x": {elf.EM_S390},
		"riscv64": {elf.EM_RISCV}, "loongarch64": {elf.EM_LOONGARCH}, "mips64": {elf.EM_MIPS}, "mips": {elf.EM_MIPS},
	}
	byGOARCH := map[string]string{"amd64": "x86_64", "386": "i686", "arm64": "aarch64", "arm": "armv7l",
		"ppc64le": "ppc64le", "ppc64": "ppc64", "s390x": "s390x", "riscv64": "riscv64", "loong64": "loongarch64",
		"mips64le": "mips64", "mips64": "mips64", "mipsle": "mips", "mips": "mips"}
	if m, ok := byKernel[kernelMachine()]; ok {
		return m
	}
	return byKernel[byGOARCH[runtime.GOARCH]]
})

// memberNotExec says why wheel member zf would not be executable once pip
// installs it ("" when it would): pip sets the execute bits of what it
// extracts only for an entry whose Unix mode (the high half of the
// external attributes) is a regular file with one of them.
func memberNotExec(zf *zip.File) string {
	mode := zf.ExternalAttrs >> 16
	switch {
	case mode == 0:
		return "its zip entry carries no Unix mode, so pip installs it without execute permission"
	case mode&0o170000 != 0o100000 || mode&0o111 == 0: // S_IFMT, S_IFREG
		return fmt.Sprintf("its zip entry's mode (%#o) is not that of an executable regular file, so pip installs it without execute permission", mode)
	}
	return ""
}

// keptFacts are the facts of a library the resolvers parse, kept with its
// symbol table so the scan does not parse it again (with its device code
// when wantCode), or nil: a file whose facts would hide an error from the
// scan (it is parsed again when the scan reaches it) keeps none.
func keptFacts(f *elfx.File, wantCode bool) *fileFacts {
	ff := factsOf(f)
	if ff.interpErr != nil || ff.dynErr != nil && !errors.Is(ff.dynErr, elfx.ErrNoDynamic) || f.SectionHeaderError() != nil {
		return nil
	}
	if wantCode {
		var err error
		if ff.code, err = f.GPUCodeObjects(); err != nil {
			return nil // errors name the path they were read through: not kept
		}
		ff.codeRead = true
	}
	return ff
}

// factsIn are the facts kept with t (keptFacts), nil for none.
func factsIn(t *symcheck.Table) *fileFacts {
	ff, _ := t.Kept().(*fileFacts)
	return ff
}

func factsOf(f *elfx.File) *fileFacts {
	ff := &fileFacts{typ: f.Type, machine: f.Machine, stack: f.GNUStack()}
	for _, p := range f.ELF().Progs {
		ff.hasInterp = ff.hasInterp || p.Type == elf.PT_INTERP
		ff.hasText = ff.hasText || p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && p.Filesz > 0
	}
	ff.interp, ff.interpErr = f.Interp()
	ff.dyn, ff.dynErr = f.Dynamic()
	ff.dlopen.Notes, ff.dlopen.NotesErr = f.DlopenNotes()
	if ff.dyn != nil {
		// The facts outlive the file in the table cache, by the thousand:
		// they must not keep its parsed headers and sections (debug/elf's
		// File, ~7 KB a file, was a third of a scan's live heap, outside
		// the cache's byte budget).
		ff.dyn = ff.dyn.Detached()
	}
	return ff
}

func isBuildDir(e, workdir string) bool {
	e = filepath.Clean(e)
	for _, p := range []string{"/tmp", "/var/tmp", "/nix/var", "/build"} {
		if e == p || strings.HasPrefix(e, p+"/") {
			return true
		}
	}
	if strings.Contains(e, "/build/") || strings.Contains(e, "/tmp/nix-build-") {
		return true
	}
	return workdir != "" && workdir != "/" && (e == workdir || strings.HasPrefix(e, workdir+"/"))
}

// checkWheel runs the file-level rules on the ELF files inside a wheel.
// With GPU targets the members' device code is read too, each member
// once, and the wheel's rocBLAS/hipBLASLt Tensile directory judged as a
// prefix's is (from the member names; kernel files parsed once, here);
// deviceCode says whether the wheel has any.
func checkWheel(ctx context.Context, p *elfx.Probe, opts *scan) (out []finding.Finding, deviceCode bool, err error) {
	path := p.Path
	zr, err := zip.NewReader(p, p.Info.Size())
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	if name, err := zipx.Check(p, p.Info.Size(), zr); err != nil {
		return nil, false, fmt.Errorf("%s: %w", zipx.MemberPath(path, name), err)
	}
	rec, err := newWheelRecord(path, zr, p)
	if err != nil {
		return nil, false, err
	}
	nameRule, _ := finding.LookupRule(finding.RuleWheelMemberName)
	for _, zf := range zr.File {
		if msg, refused := zipx.NameProblem(zf); msg != "" {
			sev := finding.SeverityWarning
			if refused {
				sev = finding.SeverityError
			}
			out = append(out, finding.Finding{Rule: finding.RuleWheelMemberName, Severity: sev, File: zipx.MemberPath(path, zf.Name), Message: msg, Fix: nameRule.Fix})
		}
	}
	wantGPU := len(opts.gpuRequired) > 0
	tensile := gpu.NewTensileLayout()
	members := map[string]*zip.File{}
	hashes := newHashPool(p)
	failed, failedAt := error(nil), len(zr.File)
	for i, zf := range zr.File {
		if zf.FileInfo().IsDir() {
			continue
		}
		name := zipx.MemberPath(path, zf.Name)
		// Every byte of the member goes to v (nil: nothing to check it
		// against): on the way when it is extracted for the rules,
		// through the pool otherwise.
		v := rec.verifier(zf)
		var fs []finding.Finding
		var dc, teed bool
		switch {
		case wantGPU && tensile.Add(name), zf.UncompressedSize64 < 64:
			// One architecture's kernels (judged with the directory), or
			// too short to be anything checked: only hashed.
		case v == nil: // not a nil *Verifier in a non-nil io.Writer
			fs, dc, _, err = checkWheelMember(zf, p, name, opts, nil)
		default:
			fs, dc, teed, err = checkWheelMember(zf, p, name, opts, v)
		}
		if wantGPU {
			members[filepath.Clean(name)] = zf // as the Tensile layout's paths are
		}
		out = append(out, fs...)
		deviceCode = deviceCode || dc
		if err != nil {
			failed, failedAt = err, i
			break
		}
		switch {
		case teed:
			rec.verified(zf, v)
		case v != nil:
			hashes.add(i, zf, v)
		}
	}
	// The first member that cannot be read, in the wheel's order, is the
	// wheel's error.
	for _, j := range hashes.wait() {
		if j.err != nil && j.at < failedAt {
			failed, failedAt = j.err, j.at
		}
		if j.err == nil {
			rec.verified(j.zf, j.v)
		}
	}
	if failed != nil {
		name := zipx.MemberPath(path, zr.File[failedAt].Name)
		if !strings.HasPrefix(failed.Error(), name+": ") { // the ELF reader's errors name it
			failed = fmt.Errorf("%s: %w", name, failed)
		}
		return append(out, rec.out...), deviceCode, failed
	}
	out = append(out, rec.finish()...)
	bf, err := wheelClosures(ctx, path, zr, p, opts)
	if err != nil {
		return out, deviceCode, err
	}
	out = append(out, bf...)
	if wantGPU {
		reports, tf := tensile.Check(opts.gpuRequired, func(kernel, arch string) bool {
			zf := members[filepath.Clean(kernel)]
			return zf != nil && gpu.MemberCodeObjectFor(zf, p, kernel, arch)
		})
		out = append(out, tf...)
		for _, r := range reports {
			deviceCode = deviceCode || len(r.Archs) > 0
		}
	}
	return out, deviceCode, nil
}

// checkWheelMember runs the file-level rules on one member if it is ELF;
// raw is the wheel. When tee is not nil and the rules extract the member,
// all of it is written to tee on the way (for RECORD's hash), and teed
// says so.
func checkWheelMember(zf *zip.File, raw io.ReaderAt, name string, opts *scan, tee io.Writer) (fs []finding.Finding, dc, teed bool, err error) {
	// Only what the host's loader loads has file-level rules: AMDGPU code
	// objects (thousands in PyTorch's wheels) are not extracted, unless
	// their device code is asked about.
	head, err := zipx.Head(zf, elfx.HostHeaderLen)
	if err != nil {
		return nil, false, false, err
	}
	if !elfx.HostLoadable(head) {
		if len(opts.gpuRequired) == 0 {
			return nil, false, false, nil
		}
		fs, dc, err := gpu.MemberDeviceCode(name, zf, raw, head, opts.gpuRequired)
		return fs, dc, false, err
	}
	r, done, err := member.Open(zf, raw, tee, cmp.Or(opts.inMemory, member.InMemory))
	if err != nil {
		return nil, false, false, err
	}
	teed = tee != nil
	defer done()
	f, err := elfx.NewFileSize(r, int64(zf.UncompressedSize64), name)
	if err != nil {
		return nil, false, teed, err
	}
	defer f.Close()
	out, err := hygiene(factsOf(f), f.VersionNeeds, name, memberNotExec(zf), opts)
	if len(opts.gpuRequired) == 0 || err != nil {
		return out, false, teed, err
	}
	cos, notes := gpu.CodeObjects(f, nil)
	gf, dc := gpu.DeviceCodeFindings(name, cos, notes, opts.gpuRequired)
	return append(out, gf...), dc, teed, nil
}

// applyPolicy sets rule IDs, applies severity overrides, ignores and the
// baseline, and counts what was dropped.
func applyPolicy(rep *Report, in []finding.Finding, opts *Options) []finding.Finding {
	out := in[:0]
	for _, f := range in {
		r, ok := finding.LookupRule(f.Rule)
		if ok {
			f.ID = r.ID
		}
		if s, ok := opts.Severity[f.ID]; ok {
			f.Severity = s
		} else if s, ok := opts.Severity[f.Rule]; ok {
			f.Severity = s
		}
		if f.Severity == finding.SeverityOff {
			rep.Ignored++
			continue
		}
		if ignored(f, opts.Ignores) {
			rep.Ignored++
			continue
		}
		if len(opts.Baseline) > 0 && opts.Baseline[f.Fingerprint()] {
			rep.Baselined++
			continue
		}
		out = append(out, f)
	}
	return out
}

func ignored(f finding.Finding, igs []Ignore) bool {
	for _, ig := range igs {
		if len(ig.Rules) > 0 {
			hit := false
			for _, r := range ig.Rules {
				hit = hit || r == f.ID || r == f.Rule
			}
			if !hit {
				continue
			}
		}
		if ig.Path != "" && !GlobMatch(ig.Path, f.File) && !GlobMatch(ig.Path, f.RelPath) {
			continue
		}
		if ig.Symbol != "" && !GlobMatch(ig.Symbol, f.Symbol) && (f.Demangled == "" || !GlobMatch(ig.Symbol, f.Demangled)) {
			continue
		}
		if ig.Soname != "" && !GlobMatch(ig.Soname, f.Library) {
			continue
		}
		return true
	}
	return false
}

// GlobMatch matches s against a glob with `*` (within a path element), `?`
// and `**` (across elements). A pattern without "/" is matched against
// the base name when s is a path.
func GlobMatch(pattern, s string) bool {
	if pattern == "" {
		return false
	}
	if !strings.Contains(pattern, "/") && strings.Contains(s, "/") && globRegexp(pattern).MatchString(filepath.Base(s)) {
		return true
	}
	return globRegexp(pattern).MatchString(s)
}

var globCache sync.Map

func globRegexp(p string) *regexp.Regexp {
	if r, ok := globCache.Load(p); ok {
		return r.(*regexp.Regexp)
	}
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '*' && i+1 < len(p) && p[i+1] == '*':
			b.WriteString(".*")
			i++
			if i+1 < len(p) && p[i+1] == '/' {
				i++
				b.WriteString("/?")
			}
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	r := regexp.MustCompile(b.String())
	globCache.Store(p, r)
	return r
}
