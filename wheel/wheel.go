// Package wheel retargets the native libraries of a Python wheel (or an
// unpacked or installed distribution) at a locally built ROCm: it plans
// which NEEDED entries to keep, replace or drop and what RUNPATH each ELF
// needs (using rpath), rewrites the ELFs through patchelf, proves that every
// closure resolves and binds against the target (symcheck), and writes a new
// wheel whose RECORD matches, copying unchanged entries without
// recompression.
package wheel

import (
	"archive/zip"
	"cmp"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/inflate"
	"github.com/rocmdoctor/rocmdoctor/internal/record"
	"github.com/rocmdoctor/rocmdoctor/internal/regfile"
	"github.com/rocmdoctor/rocmdoctor/internal/safefile"
	"github.com/rocmdoctor/rocmdoctor/internal/walk"
	"github.com/rocmdoctor/rocmdoctor/internal/zipx"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
	"github.com/rocmdoctor/rocmdoctor/rpath"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

// Options configure Relink. The zero value has no target (Relink asks for
// ROCm or LibDirs), writes nothing without Output or InPlace, and changes
// no SONAME major version.
type Options struct {
	// ROCm prefixes: their lib, lib64 and llvm/lib directories are the target.
	ROCm []string
	// LibDirs are more target directories (Nix store paths, …).
	LibDirs []string
	// Keep lists RUNPATH entries to keep as they are.
	Keep []string
	// Ignore lists globs of SONAMEs (matched against the name and its
	// unversioned form) to leave alone.
	Ignore []string
	// ReplaceBundled treats in-wheel copies of libraries the target
	// provides, under their plain names (PyTorch's ROCm wheels carry
	// torch/lib/libamdhip64.so, libMIOpen.so, librocblas.so, …), as
	// grafted copies are treated: references to them are replaced by the
	// target's SONAMEs. Without it they are kept, with a note that they
	// shadow the target.
	ReplaceBundled bool
	// DropBundled removes grafted copies (and, with ReplaceBundled,
	// bundled ones) that nothing references any more.
	DropBundled bool
	// AllowSONAMEChange permits replacing a library by another major version.
	AllowSONAMEChange bool
	// AllowUnresolved writes even when closures do not resolve completely.
	AllowUnresolved bool
	// Python is the interpreter that imports the wheel's extension
	// modules: each is bound as that program loads it, so only what the
	// interpreter exports (the Py* API) is left to it and any other
	// undefined symbol is an error that refuses the relink. "" knows no
	// interpreter: a module's undefined symbols are notes (RD1006).
	Python string
	// Resolver is the base for resolving against the system (root, hwcaps).
	Resolver rpath.Options
	// Output is the directory for the new wheel; InPlace replaces the input.
	Output  string
	InPlace bool
	DryRun  bool

	tuning *tuning // nil: defaultTuning
}

// Need classes.
const (
	InWheel      = "in-wheel"
	Target       = "target"
	System       = "system"
	SONAMEChange = "soname-change"
	Grafted      = "grafted"
	Bundled      = "bundled"
	Missing      = "missing"
	Ignored      = "ignored"
)

// Need is one NEEDED entry of a file and what the plan does with it.
type Need struct {
	Name        string `json:"name"`
	Class       string `json:"class"`
	Resolved    string `json:"resolved,omitempty"`
	Replacement string `json:"replacement,omitempty"`
	Note        string `json:"note,omitempty"`
}

// FilePlan is the plan for one ELF of the distribution.
type FilePlan struct {
	Path       string `json:"path"` // relative to the distribution root
	Grafted    bool   `json:"grafted,omitempty"`
	Bundled    bool   `json:"bundled,omitempty"` // a copy of a target library, replaced (ReplaceBundled)
	Needed     []Need `json:"needed"`
	OldRunPath string `json:"old_runpath"`
	// OldIsRPath says the old path list was a DT_RPATH (which its
	// dependencies inherit); the new one is a DT_RUNPATH.
	OldIsRPath bool            `json:"old_is_rpath,omitempty"`
	NewRunPath string          `json:"new_runpath"`
	Edits      []patchelf.Edit `json:"edits"`
	// module and python say it is a loadable module (a Python extension):
	// the program that loads it defines what it leaves undefined.
	module, python bool
	// ABIRisks are symbols the file needs that a replacement of another
	// major version does not define.
	ABIRisks []string `json:"abi_risks,omitempty"`
}

// Plan is the result of Relink.
type Plan struct {
	SchemaVersion int               `json:"schema_version"`
	Input         string            `json:"input"`
	Kind          string            `json:"kind"` // wheel, directory, installed
	TargetDirs    []string          `json:"target_dirs"`
	Files         []FilePlan        `json:"files"`
	Drop          []string          `json:"drop,omitempty"`
	Findings      []finding.Finding `json:"findings"`
	Notes         []string          `json:"notes,omitempty"`
	Output        string            `json:"output,omitempty"`
	Written       bool              `json:"written"`
	// Warnings are what resolution worked around (a damaged
	// ld.so.cache: rpath.Options.Warn), each once.
	Warnings []string `json:"warnings,omitempty"`

	st *relinkState // until Apply or Close
}

// ErrRefused marks a plan that cannot be applied without an override.
var ErrRefused = errors.New("relink refused")

// graftedName matches auditwheel's hashed names: libamdhip64-46b24d76.so.6.2.60200.
var graftedName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(lib.+)-[0-9a-f]{8}(\.so(\.[0-9.]+)?)$`)
}) // compiled on first use, not by every command at start-up

// family is the name without version: "libamdhip64" for libamdhip64.so.6,
// libamdhip64-46b24d76.so.6.2.60200 and libamdhip64.so.
func family(name string) string {
	if m := graftedName().FindStringSubmatch(name); m != nil {
		return m[1]
	}
	if i := strings.Index(name, ".so"); i > 0 {
		return name[:i]
	}
	return name
}

// major is the first version component after ".so" ("6" for libx.so.6.2).
func major(name string) string {
	if m := graftedName().FindStringSubmatch(name); m != nil {
		name = m[1] + m[2]
	}
	i := strings.Index(name, ".so.")
	if i < 0 {
		return ""
	}
	return strings.SplitN(name[i+4:], ".", 2)[0]
}

func (o *Options) targetDirs() []string {
	var out []string
	seen := map[string]bool{}
	add := func(d string) {
		// A relative directory in a RUNPATH would resolve against the
		// working directory of whoever loads the library.
		if a, err := filepath.Abs(d); err == nil {
			d = a
		}
		if st, err := os.Stat(d); err == nil && st.IsDir() && !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	for _, p := range o.ROCm {
		for _, sub := range []string{"lib", "lib64", "llvm/lib"} {
			add(filepath.Join(p, sub))
		}
	}
	for _, d := range o.LibDirs {
		add(d)
	}
	return out
}

// dist is a staged distribution: its ELF files copied into a work tree.
type dist struct {
	tune  *tuning
	root  string // work tree
	kind  string
	input string
	elfs  []string // relative paths of ELF files
	isELF map[string]bool
	// For wheels and installed distributions: the RECORD path relative to root.
	record string
	// For a wheel's deflated ELF members: the block index of the
	// original stream (so write can reuse its unchanged blocks) and the
	// byte ranges the edits wrote.
	index  map[string]*inflate.Index
	edited map[string][][2]int64
	// RECORD digests of the patched files, begun as each is patched.
	digests map[string]*fileDigest
	// checks are the digests of the staged ELF files left as they are,
	// which their RECORD lines must match (begun before writing).
	checks map[string]*fileDigest
	// deferred are ELF files left unstaged (a wheel's unextracted):
	// copies that the relink is to drop (see droppable).
	deferred []string
	// big is the wheel member whose edits are predicted while it is
	// being inflated (predict.go), when there is one.
	big *prediction
	// preview, in the copy of a dist that predicts big's edits, reads
	// big while it is being inflated.
	preview func() (*elfx.File, error)
	// notes are for the plan: what a killed run left, removed.
	notes []string
}

// openELF opens the staged copy of rel.
func (d *dist) openELF(rel string) (*elfx.File, error) {
	if d.preview != nil && rel == d.big.rel {
		return d.preview()
	}
	return elfx.Open(filepath.Join(d.root, rel))
}

// Relink plans (and unless DryRun applies) the retargeting of input: a
// .whl file, an unpacked wheel directory, or an installed distribution's
// .dist-info directory. It is PlanRelink followed by Apply (or Close for a
// dry run).
func Relink(ctx context.Context, input string, o Options) (*Plan, error) {
	p, err := PlanRelink(ctx, input, o)
	if err != nil || o.DryRun {
		if p != nil {
			p.Close()
		}
		return p, err
	}
	if err := p.Apply(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// relinkState is what a plan holds until it is applied or closed: the
// staged copies (edited and verified), the output begun early, and the
// goroutines still hashing.
type relinkState struct {
	o        Options
	d        *dist
	out      *wheelOutput
	pred     *prediction
	release  func()
	warnings *[]string
}

func (st *relinkState) close() {
	if st.out != nil {
		st.out.discard()
		st.out = nil
	}
	st.pred.cancel()
	if st.d != nil {
		for _, dg := range st.d.digests {
			dg.cancel()
		}
		for _, dg := range st.d.checks {
			dg.cancel()
		}
	}
	st.release()
}

// PlanRelink stages input (see Relink), plans every file's edits, applies
// them to private copies and verifies the result against the target: the
// plan is what --dry-run and --json print, its findings final. A refused
// plan comes with ErrRefused. Unless o.DryRun, the output is begun while
// the members are staged (the entries that cannot change are copied into
// a temporary file beside the destination, under ctx), so that Apply has
// only the changed members and RECORD left to write. The plan holds the
// staged files until Apply or Close.
func PlanRelink(ctx context.Context, input string, o Options) (p *Plan, err error) {
	// What resolution works around goes into the plan too.
	warnings := new([]string)
	o.Resolver.KeepWarnings(warnings)
	dirs := o.targetDirs()
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no target directories: give --rocm PREFIX (with lib, lib64 or llvm/lib) or --lib-dir")
	}
	// Work directories of relinks that were killed are removed; this one
	// is locked while in use, so a concurrent relink leaves it be.
	var swept []string
	safefile.SweepDirs("", workPrefix, func(msg string) { swept = append(swept, msg) })
	work, release, err := safefile.MkdirTemp("", workPrefix)
	if err != nil {
		return nil, err
	}
	st := &relinkState{o: o, release: release, warnings: warnings}
	defer func() {
		if p != nil {
			p.Warnings = *warnings
		}
		if err != nil {
			st.close()
			return
		}
		p.st = st
	}()
	// A wheel's output is begun as soon as its ELF members are known: the
	// entries that cannot change are copied while those are inflated.
	var targets map[string][]targetLib
	early := func(d *dist) error {
		if o.DryRun {
			return nil
		}
		var err error
		if st.out, err = newWheelOutput(ctx, d, o); err != nil {
			return err
		}
		if d.big != nil {
			st.pred = d.big
			st.pred.start(ctx, d, targets, o, dirs)
		}
		return nil
	}
	targets, err = indexTargets(dirs)
	if err != nil {
		return nil, err
	}
	d, err := stage(input, work, o.tune(), early, droppable(targets, o))
	if err != nil {
		return nil, err
	}
	st.d = d
	p = &Plan{SchemaVersion: 1, Input: input, Kind: d.kind, TargetDirs: dirs, Findings: []finding.Finding{}, Notes: append(swept, d.notes...)}
	if err := plan(ctx, d, targets, o, p); err != nil {
		return nil, err
	}
	if len(p.Files) == 0 {
		p.Notes = append(p.Notes, "no native libraries or executables for the host in it: nothing to relink")
	}
	if err := editStaged(d, st.pred, p); err != nil {
		return nil, err
	}
	if err := verify(ctx, d, dirs, o, p); err != nil {
		return nil, err
	}
	d.scrub(p)
	for _, f := range p.Findings {
		if f.Severity == finding.SeverityError && !o.AllowUnresolved {
			return p, fmt.Errorf("%s: %w: %d finding(s); nothing was written (use --allow-unresolved or --allow-soname-change as the findings say)", input, ErrRefused, len(p.Findings))
		}
	}
	return p, nil
}

// editStaged applies the plan's edits to the staged copies (private
// scratch files: patched in place, no fsync) and removes the dropped ones.
func editStaged(d *dist, pred *prediction, p *Plan) error {
	for _, fp := range p.Files {
		if len(fp.Edits) == 0 {
			continue
		}
		pp, err := patchelf.EditFile(filepath.Join(d.root, fp.Path), fp.Edits, patchelf.Options{}, patchelf.WriteOptions{InPlace: true, NoSync: true})
		if err != nil {
			return d.fileErr(fp.Path, err)
		}
		if d.kind == "wheel" && pred != nil && pred.rel == fp.Path {
			if dg := pred.confirmed(pp); dg != nil {
				d.digests[fp.Path] = dg
			} else if pred.holed {
				// The edits were not the ones predicted, and the copy
				// they were made to has a hole: inflate it in full
				// and make them again.
				if err := d.refill(pred, fp.Edits); err != nil {
					return d.fileErr(fp.Path, err)
				}
				continue
			}
		}
		d.edited[fp.Path] = pp.WrittenRanges()
		if d.kind == "wheel" && d.digests[fp.Path] == nil {
			d.digests[fp.Path] = startDigest(filepath.Join(d.root, fp.Path))
		}
	}
	for _, rel := range p.Drop {
		os.Remove(filepath.Join(d.root, rel))
	}
	return nil
}

// Apply writes the plan: the new wheel (to Options.Output, or over the
// input with InPlace), or the tree or installed distribution rewritten in
// place, with RECORD regenerated. A plan is applied once; Apply releases
// what it holds, whether it succeeds or not.
func (p *Plan) Apply(ctx context.Context) (err error) {
	st := p.st
	if st == nil {
		return errors.New("the plan was applied or closed already")
	}
	p.st = nil
	defer func() {
		st.close()
		p.Warnings = *st.warnings // with what the prediction met
	}()
	d, o := st.d, st.o
	// The libraries left as they are keep their RECORD lines only if the
	// lines are right (a library patched by hand after unpacking, zipped
	// again without a new RECORD, left as it is now, would keep a line
	// installers refuse): each is hashed from its staged copy on a
	// goroutine of its own while the rest is written.
	changed, dropped := p.changes()
	for _, rel := range d.elfs {
		if d.record == "" {
			break // no lines to check
		}
		path := filepath.Join(d.root, filepath.FromSlash(rel))
		if changed[rel] || dropped[rel] || st.pred != nil && st.pred.rel == rel && st.pred.holed || !regularFile(path) {
			continue // new lines, no lines, a copy with a hole, or not staged
		}
		d.checks[rel] = startDigest(path)
	}
	if d.kind == "wheel" {
		w := st.out
		if w == nil { // planned as a dry run: nothing begun
			if w, err = newWheelOutput(ctx, d, o); err != nil {
				return err
			}
		}
		st.out = nil // finish cleans up after itself
		err = w.finish(p)
	} else {
		err = writeFiles(d, p)
		// What was rewritten in place: the tree, or the installed
		// distribution's directory (site-packages).
		p.Output = filepath.Clean(d.input)
		if d.kind == "installed" {
			p.Output = filepath.Dir(p.Output)
		}
	}
	if err != nil {
		return err
	}
	p.Written = true
	return nil
}

// Close releases what an unapplied plan holds (staged copies, the output
// begun for it); it does nothing after Apply.
func (p *Plan) Close() {
	if p.st != nil {
		p.st.close()
		p.st = nil
	}
}

// droppable is, for a relink that drops copies (--drop-bundled), which
// ELF files need not be staged (a wheel's extracted, a directory's or an
// installed distribution's copied): grafted copies, and with
// --replace-bundled copies under their own names, of libraries the target
// provides, told by their file names. They are only to be dropped, and a
// PyTorch wheel's bundled ROCm libraries are GBs to inflate for nothing.
// nil when nothing is dropped. plan keeps a copy only for a reference left
// alone with --ignore or a library the target lacks, both ruled out here
// by the same name, so it drops every file left unstaged (and fails if
// that ever stops being so).
func droppable(targets map[string][]targetLib, o Options) func(name string) bool {
	if !o.DropBundled {
		return nil
	}
	return func(name string) bool {
		base := path.Base(name)
		if len(targets[family(base)]) == 0 || ignored(base, o.Ignore) {
			return false
		}
		return o.ReplaceBundled || isGrafted(name)
	}
}

// isGrafted reports whether rel is an auditwheel-grafted copy:
// <pkg>.libs/libamdhip64-46b24d76.so.6.2.60200.
func isGrafted(rel string) bool {
	return graftedName().MatchString(path.Base(rel)) && strings.Contains(rel, ".libs/")
}

// targetFile is the path of the first file named name in dirs, or "".
func targetFile(dirs []string, name string) string {
	for _, d := range dirs {
		if p := filepath.Join(d, name); regularFile(p) {
			return p
		}
	}
	return ""
}

func regularFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// stage copies the ELF files of input into work. For a wheel, early is
// called once its ELF members are known, before they are extracted. ELF
// files for which skip (if not nil) is true are left where they are
// (dist.deferred).
func stage(input, work string, tune *tuning, early func(*dist) error, skip func(string) bool) (*dist, error) {
	st, err := os.Stat(input)
	if err != nil {
		return nil, err
	}
	d := &dist{root: work, input: input, tune: tune, index: map[string]*inflate.Index{}, edited: map[string][][2]int64{}, digests: map[string]*fileDigest{}, checks: map[string]*fileDigest{}}
	switch {
	case !st.IsDir() && strings.HasSuffix(input, ".whl"):
		d.kind = "wheel"
		if err := stageWheel(d, input, work, early, skip); err != nil {
			return nil, err
		}
	case st.IsDir() && strings.HasSuffix(filepath.Clean(input), ".dist-info"):
		d.kind = "installed"
		d.record = filepath.ToSlash(filepath.Join(filepath.Base(filepath.Clean(input)), "RECORD"))
		rec, err := readRecord(filepath.Join(input, "RECORD"))
		if err != nil {
			return nil, err
		}
		for _, r := range rec {
			if !safeRel(r.Path) {
				continue
			}
			if err := stageFile(d.source(r.Path), work, r.Path, d, skip); err != nil {
				return nil, err
			}
		}
	case st.IsDir():
		d.kind = "directory"
		err := walk.Dir(input, func(p string, e os.DirEntry, err error) error {
			if err != nil || !e.Type().IsRegular() {
				return nil
			}
			rel, _ := filepath.Rel(input, p)
			rel = filepath.ToSlash(rel)
			if strings.HasSuffix(rel, ".dist-info/RECORD") {
				d.record = rel
			}
			return stageFile(p, work, rel, d, skip)
		})
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%s: not a .whl file, a wheel directory or a .dist-info directory", input)
	}
	sort.Strings(d.elfs)
	return d, nil
}

// stageWheel extracts the wheel's ELF members into work, several at a
// time (a wheel holds a few large libraries, and inflating is the slow
// part), indexing the deflate blocks of each.
func stageWheel(d *dist, input, work string, early func(*dist) error, skip func(string) bool) error {
	raw, zr, err := zipx.OpenFile(input)
	if err != nil {
		return err
	}
	defer raw.Close()
	var elfs []*zip.File
	at := map[string]int{} // a name listed twice: the later entry wins
	for _, zf := range zr.File {
		if strings.HasSuffix(zf.Name, ".dist-info/RECORD") {
			d.record = zf.Name
		}
		if msg, _ := zipx.NameProblem(zf); msg != "" {
			return d.errAt(zf.Name, fmt.Errorf("%s; not relinked (rocmdoctor check reports it as RD1502)", msg))
		}
		if zf.FileInfo().IsDir() || !safeRel(zf.Name) {
			continue
		}
		isELF, err := sniffMember(zf)
		if err != nil {
			return d.errAt(zf.Name, err)
		}
		if !isELF {
			continue
		}
		if i, ok := at[zf.Name]; ok {
			elfs[i] = zf
			continue
		}
		at[zf.Name] = len(elfs)
		elfs = append(elfs, zf)
	}
	d.isELF = map[string]bool{}
	for _, zf := range elfs {
		d.isELF[zf.Name] = true
	}
	elfs = slices.DeleteFunc(elfs, func(zf *zip.File) bool {
		if skip != nil && skip(zf.Name) {
			d.deferred = append(d.deferred, zf.Name)
			return true
		}
		return false
	})
	// The members are inflated in full: a PyTorch wheel's libraries take
	// GBs, more than a CI machine's /tmp often has. Said before anything
	// is written, not when the disk fills halfway through.
	var need uint64
	for _, zf := range elfs {
		need += min(zf.UncompressedSize64, math.MaxUint64-need) // declared sizes: saturate, not wrap
	}
	if free, ok := d.tune.freeSpace(work); ok && need > free {
		return fmt.Errorf("%s: inflating its %d native librar%s for editing takes %s under %s, which has %s free: %w",
			input, len(elfs), plural(len(elfs), "y", "ies"), needed(need), filepath.Dir(work), available(free), errNoRoom)
	}
	for _, zf := range elfs {
		d.elfs = append(d.elfs, zf.Name)
	}
	procs := runtime.GOMAXPROCS(0)
	big := bigMember(elfs, procs, d.tune.predictMin)
	if big != nil {
		d.big = newPrediction(big, filepath.Join(work, filepath.FromSlash(big.Name)), d.tune)
	}
	if err := early(d); err != nil {
		return err
	}
	// The largest first: it takes longest, and the prediction of its
	// edits waits for the others.
	order := make([]int, len(elfs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(elfs[b].CompressedSize64, elfs[a].CompressedSize64)
	})
	idx := make([]*inflate.Index, len(elfs))
	errs := make([]error, len(elfs))
	sem := make(chan struct{}, procs)
	var wg, others sync.WaitGroup
	for _, i := range order {
		zf := elfs[i]
		wg.Add(1)
		var pred *prediction
		if big == zf {
			pred = d.big
		} else {
			others.Add(1)
		}
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if pred == nil {
				defer others.Done()
			}
			idx[i], errs[i] = extract(zf, raw, filepath.Join(work, filepath.FromSlash(zf.Name)), pred)
		}()
	}
	if d.big != nil {
		go func() {
			others.Wait()
			close(d.big.others)
		}()
	}
	wg.Wait()
	for i, zf := range elfs {
		if errs[i] != nil {
			return d.errAt(zf.Name, roomHint(errs[i]))
		}
		if idx[i] != nil {
			d.index[zf.Name] = idx[i]
		}
	}
	return nil
}

// workPrefix names the work directories of relinks in $TMPDIR.
const workPrefix = "rocmdoctor-wheel-"

// errNoRoom ends the messages of a relink that $TMPDIR has no room for.
var errNoRoom = errors.New("set TMPDIR to a directory with more room")

// roomHint adds to a write that found its disk full where the relink
// stages the libraries it edits.
func roomHint(err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w (native libraries are staged under $TMPDIR to be edited: %w)", err, errNoRoom)
	}
	return err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// needed and available say a shortfall of space: below a megabyte in
// bytes, above in MB, what is needed rounded up and what is available
// rounded down, so the two never read as equal.
func needed(n uint64) string { return megabytes(n, 999_999) }

func available(n uint64) string { return megabytes(n, 0) }

func megabytes(n, round uint64) string {
	if n < 1_000_000 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d MB", (n+round)/1_000_000)
}

// sniffMember reports whether a member is an ELF file to relink: a host
// shared object or executable (elfx.HostLoadable). AMDGPU code objects
// (thousands in PyTorch's wheels, over a GB) and object files are data
// here, copied as they are. Shorter than four bytes is fine; a member that
// does not decode is an error.
func sniffMember(zf *zip.File) (bool, error) {
	hdr, err := zipx.Head(zf, elfx.HostHeaderLen)
	if err != nil {
		return false, err
	}
	return elfx.HostLoadable(hdr), nil
}

// extract writes member zf to dst: deflated members through our decoder,
// which indexes their blocks; others as archive/zip reads them. pred, when
// it was started, follows the writing (predict.go).
func extract(zf *zip.File, raw *os.File, dst string, pred *prediction) (*inflate.Index, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return nil, err
	}
	// Read and written: a prediction reads back what it did not see.
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o755)
	if err != nil {
		return nil, err
	}
	var w io.Writer = out
	if pred != nil && pred.started {
		w = pred.writer(out)
	}
	idx, err := zipx.Extract(w, raw, zf)
	if pred != nil && pred.started {
		pred.staged()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return idx, err
}

func safeRel(p string) bool {
	return p != "" && !strings.HasPrefix(p, "/") && !strings.Contains("/"+p+"/", "/../")
}

func stageFile(src, work, rel string, d *dist, skip func(string) bool) error {
	fh, err := regfile.Open(src)
	if err != nil {
		return nil // RECORD may list files that are gone; not ours to judge here
	}
	defer fh.Close()
	var hdr [elfx.HostHeaderLen]byte
	n, _ := fh.ReadAt(hdr[:], 0)
	if !elfx.HostLoadable(hdr[:n]) {
		return nil
	}
	if skip != nil && skip(rel) {
		d.deferred = append(d.deferred, rel)
		return nil
	}
	dst := filepath.Join(work, filepath.FromSlash(rel))
	os.MkdirAll(filepath.Dir(dst), 0o755)
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := fh.Seek(0, io.SeekStart); err != nil {
		out.Close()
		return err
	}
	_, err = io.Copy(out, fh)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	d.elfs = append(d.elfs, rel)
	return roomHint(err)
}

// targetLib is a library in a target directory.
type targetLib struct{ soname, path, dir string }

func indexTargets(dirs []string) (map[string][]targetLib, error) {
	fam := map[string][]targetLib{}
	seen := map[string]bool{}
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if !strings.Contains(e.Name(), ".so") {
				continue
			}
			p := filepath.Join(dir, e.Name())
			f, err := elfx.Open(p)
			if err != nil {
				continue
			}
			soname := e.Name()
			if dy, err := f.Dynamic(); err == nil && dy.Soname != "" {
				soname = dy.Soname
			}
			f.Close()
			if seen[soname] {
				continue
			}
			seen[soname] = true
			fam[family(soname)] = append(fam[family(soname)], targetLib{soname: soname, path: p, dir: dir})
		}
	}
	return fam, nil
}

func ignored(name string, globs []string) bool {
	for _, g := range globs {
		for _, cand := range []string{name, family(name) + ".so"} {
			if ok, _ := path.Match(g, cand); ok {
				return true
			}
		}
	}
	return false
}

func plan(ctx context.Context, d *dist, targets map[string][]targetLib, o Options, p *Plan) error {
	pl := &planner{ctx: ctx, d: d, targets: targets, o: o, p: p, sys: rpath.New(o.Resolver),
		inWheel: map[string]string{}, grafted: map[string]bool{}, bundled: map[string]bool{},
		shadows: map[string]string{}, referenced: map[string]bool{}}
	pl.readWheel()
	for _, rel := range d.elfs {
		fp, ok, err := pl.file(rel)
		if err != nil {
			return err
		}
		if ok {
			p.Files = append(p.Files, fp)
		}
	}
	if o.DropBundled {
		return pl.drop()
	}
	return nil
}

// planner is the state of one plan: what the wheel holds, and which of its
// copies are referenced.
type planner struct {
	ctx     context.Context
	d       *dist
	targets map[string][]targetLib
	o       Options
	p       *Plan
	sys     *rpath.Resolver
	// In-wheel libraries by SONAME and by file name.
	inWheel map[string]string
	grafted map[string]bool
	// Copies of target libraries under their own names: replaced with
	// ReplaceBundled (bundled), otherwise noted as shadowing the target.
	bundled map[string]bool
	shadows map[string]string
	// In-wheel copies some file keeps needing (not dropped).
	referenced map[string]bool
	read       map[string]elfHeaders
}

// elfHeaders is what planning needs from each file, read in one open: its
// SONAME names it in the wheel, the rest is for its own plan.
type elfHeaders struct {
	err, dynErr, interpErr error
	dy                     *elfx.Dynamic
	interp                 string
	typ                    elf.Type
}

// readWheel reads every file's headers and sorts the wheel's libraries
// into its own, grafted copies, bundled copies of target libraries and
// copies that shadow one.
func (pl *planner) readWheel() {
	d := pl.d
	pl.read = make(map[string]elfHeaders, len(d.elfs))
	for _, rel := range d.elfs {
		f, err := d.openELF(rel)
		if err != nil {
			pl.read[rel] = elfHeaders{err: err}
			continue
		}
		h := elfHeaders{typ: f.Type}
		h.dy, h.dynErr = f.Dynamic()
		h.interp, h.interpErr = f.Interp()
		f.Close()
		pl.read[rel] = h
		base := path.Base(rel)
		pl.inWheel[base] = rel
		name := base
		if h.dynErr == nil && h.dy.Soname != "" {
			pl.inWheel[h.dy.Soname] = rel
			name = h.dy.Soname
		}
		switch tl := pl.targets[family(name)]; {
		case isGrafted(rel):
			pl.grafted[rel] = true
		case len(tl) == 0:
		case pl.o.ReplaceBundled:
			pl.bundled[rel] = true
		default:
			pl.shadows[rel] = pickSameMajor(tl, major(name)).path
		}
	}
	// The copies left unextracted are known by their file names.
	for _, rel := range d.deferred {
		pl.inWheel[path.Base(rel)] = rel
		if isGrafted(rel) {
			pl.grafted[rel] = true
		} else {
			pl.bundled[rel] = true
		}
	}
}

// file plans one ELF file: each NEEDED entry classified, the edits, the
// new RUNPATH; ok is false for a file without a dynamic section.
func (pl *planner) file(rel string) (fp FilePlan, ok bool, err error) {
	h := pl.read[rel]
	if h.err != nil {
		return fp, false, pl.d.fileErr(rel, h.err)
	}
	dy, interp := h.dy, h.interp
	if h.dynErr != nil {
		return fp, false, nil // no dynamic section: nothing to relink
	}
	if h.interpErr != nil {
		return fp, false, pl.d.fileErr(rel, h.interpErr)
	}
	fp = FilePlan{Path: rel, Grafted: pl.grafted[rel], Bundled: pl.bundled[rel], Needed: []Need{}}
	fp.module, fp.python = symcheck.ModuleKind(h.typ, interp != "", dy, rel)
	fp.OldRunPath = dy.RunPath
	if !dy.HasRunPath {
		fp.OldRunPath, fp.OldIsRPath = dy.RPath, dy.HasRPath
	}
	var origins []string
	for _, n := range dy.Needed {
		nd, origin := pl.need(rel, n)
		if origin != "" {
			origins = append(origins, origin)
		}
		if nd.Replacement != "" && nd.Replacement != n {
			fp.Edits = append(fp.Edits, patchelf.Edit{Kind: patchelf.KindReplaceNeeded, Arg: n, Arg2: nd.Replacement})
		}
		fp.Needed = append(fp.Needed, nd)
	}
	fp.NewRunPath = pl.runPath(rel, &fp, origins)
	if fp.NewRunPath != fp.OldRunPath {
		fp.Edits = append(fp.Edits, patchelf.Edit{Kind: patchelf.KindSetRPath, Arg: fp.NewRunPath})
	}
	if fp.Grafted || fp.Bundled {
		fp.Edits = nil // grafted and bundled copies are kept or dropped, not rewritten
	}
	return fp, true, nil
}

// need classifies the NEEDED entry n of file rel, and returns the $ORIGIN
// directory the file's RUNPATH needs for it ("" for none).
func (pl *planner) need(rel, n string) (nd Need, origin string) {
	o, p, inWheel := pl.o, pl.p, pl.inWheel
	nd = Need{Name: n}
	tl := pl.targets[family(n)]
	switch {
	case ignored(n, o.Ignore):
		nd.Class = Ignored
		if dep := inWheel[n]; dep != "" {
			// Left alone, it must still be found where it is:
			// kept, and its directory kept in the RUNPATH.
			nd.Resolved = dep
			pl.referenced[dep] = true
			origin = originDir(rel, dep)
		}
	case inWheel[n] != "" && !pl.grafted[inWheel[n]] && !pl.bundled[inWheel[n]]:
		nd.Class, nd.Resolved = InWheel, inWheel[n]
		origin = originDir(rel, inWheel[n])
		if t := pl.shadows[inWheel[n]]; t != "" {
			nd.Note = "a copy of " + t + " from the target, which it shadows (--replace-bundled replaces it)"
		}
	case inWheel[n] != "":
		kind := "grafted"
		nd.Class, nd.Resolved = Grafted, inWheel[n]
		if pl.bundled[inWheel[n]] {
			kind, nd.Class = "bundled", Bundled
		}
		if len(tl) == 0 {
			nd.Note = "no " + family(n) + " in the target; the grafted copy stays"
			pl.referenced[inWheel[n]] = true
			origin = originDir(rel, inWheel[n])
			break
		}
		best := pickSameMajor(tl, major(n))
		nd.Replacement = best.soname
		switch {
		case major(n) == "" && nd.Class == Bundled:
			// An unversioned SONAME (libamdhip64.so) names no
			// major version to differ from; binding the file
			// against the target below is what tells.
			nd.Note = fmt.Sprintf("the bundled copy's SONAME has no version; the target has %s", best.soname)
		case major(best.soname) != major(n):
			nd.Note = fmt.Sprintf("the %s copy is major %s, the target has %s", kind, major(n), best.soname)
			if !o.AllowSONAMEChange {
				p.Findings = append(p.Findings, refuse(rel, n, best.soname))
			}
		}
	case hasSoname(tl, n):
		nd.Class = Target
		for _, t := range tl {
			if t.soname == n {
				nd.Resolved = t.path
			}
		}
	case len(tl) > 0 && targetFile(p.TargetDirs, n) != "":
		// The loader looks for the file name: an unversioned
		// libamdhip64.so is the target's development link.
		nd.Class, nd.Resolved = Target, targetFile(p.TargetDirs, n)
	case len(tl) > 0:
		best := pickSameMajor(tl, major(n))
		nd.Class, nd.Replacement, nd.Resolved = SONAMEChange, best.soname, best.path
		switch {
		case major(n) == "":
			// No major version to differ from: what binding
			// against the target finds missing is the ABI risk.
			nd.Note = fmt.Sprintf("%s has no version; the target has %s", n, best.soname)
		case !o.AllowSONAMEChange:
			p.Findings = append(p.Findings, refuse(rel, n, best.soname))
		}
	case pl.d.preview != nil:
		// Only the edits are wanted (predict.go); where the
		// system has a library changes none.
		nd.Class = System
	default:
		if path := resolveSystem(pl.ctx, pl.sys, filepath.Join(pl.d.root, rel), n); path != "" {
			nd.Class, nd.Resolved = System, path
		} else {
			nd.Class = Missing
		}
	}
	return nd, origin
}

// runPath is file rel's new RUNPATH: the kept entries, the in-wheel
// $ORIGIN directories, then the target directories when it uses the
// target.
func (pl *planner) runPath(rel string, fp *FilePlan, origins []string) string {
	var rp []string
	add := func(e string) {
		if !slices.Contains(rp, e) {
			rp = append(rp, e)
		}
	}
	for _, e := range strings.Split(fp.OldRunPath, ":") {
		if slices.Contains(pl.o.Keep, e) {
			add(e)
		}
	}
	for _, e := range origins {
		add(e)
	}
	// A target library the loader already finds where it is (the
	// file's RUNPATH, the cache, the default directories: libc in
	// /usr/lib/x86_64-linux-gnu when that is a target directory)
	// needs no new directory: a file whose NEEDED all resolve so
	// keeps its RUNPATH.
	var found map[string]string
	if pl.d.preview == nil {
		found = systemPaths(pl.ctx, pl.sys, filepath.Join(pl.d.root, rel))
	}
	usesTarget := false
	for _, n := range fp.Needed {
		already := n.Class == Target && n.Replacement == "" && found[n.Name] != "" && sameFile(found[n.Name], n.Resolved)
		usesTarget = usesTarget || (n.Class == Target && !already) || n.Class == SONAMEChange || n.Replacement != ""
	}
	if !usesTarget {
		// Nothing from the target: keep the run path unless an entry
		// resolves against the working directory.
		rp = nil
		for _, e := range strings.Split(fp.OldRunPath, ":") {
			if e != "" && (strings.HasPrefix(e, "/") || rpath.OriginRelative(e)) {
				add(e)
			}
		}
		return strings.Join(rp, ":")
	}
	for _, dir := range pl.p.TargetDirs {
		add(dir)
	}
	return strings.Join(rp, ":")
}

// drop lists the grafted and bundled copies no file needs any more
// (DropBundled), notes a dropped copy the wheel may dlopen() by its file
// name, and leaves out the plans of dropped files.
func (pl *planner) drop() error {
	d, p := pl.d, pl.p
	for _, set := range []map[string]bool{pl.grafted, pl.bundled} {
		for rel := range set {
			if !pl.referenced[rel] {
				p.Drop = append(p.Drop, rel)
			}
		}
	}
	for _, rel := range d.deferred {
		if pl.referenced[rel] {
			return fmt.Errorf("%s: %s was left unstaged to be dropped, but the plan keeps it (a bug in rocmdoctor)", d.input, rel)
		}
	}
	sort.Strings(p.Drop)
	// No NEEDED entry names what is dropped, but the wheel may dlopen()
	// a bundled copy by its file name (PyTorch's torch/lib/libhiprtc.so);
	// the target answers that only with a file of that name.
	for _, rel := range p.Drop {
		base := path.Base(rel)
		if tl := pl.targets[family(base)]; pl.bundled[rel] && len(tl) > 0 && targetFile(p.TargetDirs, base) == "" {
			t := pickSameMajor(tl, major(base))
			p.Notes = append(p.Notes, fmt.Sprintf("dropped %s, which no NEEDED entry names; should the wheel dlopen(\"%s\"), no target directory has that name (a link %s -> %s would answer it)",
				rel, base, filepath.Join(t.dir, base), filepath.Base(t.path)))
		}
	}
	// Drop the plans of removed files.
	kept := p.Files[:0]
	for _, fp := range p.Files {
		if !slices.Contains(p.Drop, fp.Path) {
			kept = append(kept, fp)
		}
	}
	p.Files = kept
	return nil
}

func refuse(file, from, to string) finding.Finding {
	return finding.Finding{Rule: "soname-major-change", Severity: finding.SeverityError, File: file, Library: from,
		Message: fmt.Sprintf("%s needs %s but the target provides %s: a different major version may not be ABI-compatible", file, from, to),
		Fix:     "rebuild against the target, or pass --allow-soname-change to relink and review the reported ABI risks"}
}

func hasSoname(tl []targetLib, n string) bool {
	for _, t := range tl {
		if t.soname == n {
			return true
		}
	}
	return false
}

// pickSameMajor prefers a target library of the same major version, and
// otherwise (another major, or an unversioned name such as PyTorch's
// libamdhip64.so) the newest: the highest major, not the first name in
// the directory (libamdhip64.so.5 where .so.6 is there too).
func pickSameMajor(tl []targetLib, mj string) targetLib {
	for _, t := range tl {
		if major(t.soname) == mj {
			return t
		}
	}
	best := tl[0]
	for _, t := range tl[1:] {
		if newerMajor(major(t.soname), major(best.soname)) {
			best = t
		}
	}
	return best
}

// newerMajor reports whether major version a is above b: by number where
// both are numbers, a numbered one above none, by text otherwise.
func newerMajor(a, b string) bool {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	switch {
	case errA == nil && errB == nil:
		return x > y
	case errA == nil || errB == nil:
		return errA == nil
	}
	return a > b
}

// originDir is the $ORIGIN-relative directory of dep seen from file.
func originDir(file, dep string) string {
	rel, err := filepath.Rel(path.Dir(file), path.Dir(dep))
	if err != nil || rel == "." {
		return "$ORIGIN"
	}
	return "$ORIGIN/" + filepath.ToSlash(rel)
}

// systemPaths is where the loader finds each NEEDED name of file as it
// is (nothing found: no entry).
func systemPaths(ctx context.Context, r *rpath.Resolver, file string) map[string]string {
	res, err := r.Resolve(ctx, file)
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, d := range res.Root.Deps {
		if d.Object != nil {
			out[d.Name] = d.Path
		}
	}
	return out
}

func resolveSystem(ctx context.Context, r *rpath.Resolver, file, name string) string {
	res, err := r.Resolve(ctx, file)
	if err != nil {
		return ""
	}
	for _, d := range res.Root.Deps {
		if d.Name == name && d.Object != nil {
			return d.Path
		}
	}
	return ""
}

// verify resolves and binds every rewritten ELF against the target.
func verify(ctx context.Context, d *dist, dirs []string, o Options, p *Plan) error {
	ro := o.Resolver
	ro.LibDirs = append(append([]string(nil), ro.LibDirs...), dirs...)
	b := symcheck.NewBinder(rpath.New(ro))
	for i := range p.Files {
		fp := &p.Files[i]
		abs := filepath.Join(d.root, fp.Path)
		host := ""
		if fp.module && fp.python {
			host = o.Python
		}
		inHost := host != ""
		res, err := b.BindLoaded(ctx, host, abs)
		if err != nil {
			return d.fileErr(fp.Path, err)
		}
		changed := false
		for _, n := range fp.Needed {
			changed = changed || n.Class == SONAMEChange || n.Replacement != ""
		}
		p.Findings = append(p.Findings, stillInWheel(d, fp, res.Closure)...)
		// A library left alone with --ignore is expected where the wheel
		// is used: here it may be missing, and what the file takes from
		// it cannot be checked.
		var ignoredMissing []string
		for _, f := range res.Findings {
			if f.Rule == finding.RuleMissingLibrary && fp.leftAlone(f.Library) {
				ignoredMissing = append(ignoredMissing, f.Library)
			}
		}
		for _, f := range res.Findings {
			f.File = fp.Path
			// Findings name the staged copy: they name the wheel's file.
			f.Message = strings.ReplaceAll(f.Message, abs, fp.Path)
			switch {
			case f.Rule == finding.RuleMissingLibrary && fp.leftAlone(f.Library):
				f.Severity = finding.SeverityNote
				f.Message += " — ignored (--ignore): expected where the wheel is used"
				p.Findings = append(p.Findings, f)
				continue
			case f.Rule == finding.RuleUndefinedSymbol && len(ignoredMissing) > 0:
				f.Severity = finding.SeverityNote
				f.Message += " — perhaps from " + strings.Join(ignoredMissing, ", ") + ", ignored and not here to check"
				p.Findings = append(p.Findings, f)
				continue
			}
			if fp.module && !inHost && f.Rule == finding.RuleUndefinedSymbol {
				// An extension module's Py* API comes from the
				// interpreter that imports it, as a plugin's symbols
				// come from its host: not the target's to provide.
				symcheck.AsModuleNote(&f, fp.Path, fp.python)
				p.Findings = append(p.Findings, f)
				continue
			}
			if changed && f.Symbol != "" {
				risk := f.Symbol
				if f.Version != "" {
					risk += "@" + f.Version
				}
				fp.ABIRisks = append(fp.ABIRisks, risk)
			}
			if inHost && f.Rule == finding.RuleUndefinedSymbol {
				f.Message += fmt.Sprintf(" — neither %s (which imports the module) nor the module's libraries define it", o.Python)
			}
			p.Findings = append(p.Findings, f)
		}
	}
	return nil
}

// fileErr names the distribution's file rel, not its staged copy, in err,
// which the ELF reader, the patcher or the binder made about the copy.
func (d *dist) fileErr(rel string, err error) error {
	msg := strings.ReplaceAll(err.Error(), filepath.Join(d.root, filepath.FromSlash(rel)), rel)
	if !strings.HasPrefix(msg, rel) {
		msg = rel + ": " + msg
	}
	return &stagedError{msg: d.source(rel) + strings.TrimPrefix(msg, rel), err: err}
}

// source is where the distribution's file rel is: WHEEL!/REL for a wheel's
// member (as check and gpus name it), the file's path for a directory or
// an installed distribution (whose RECORD paths are relative to the
// site-packages directory holding its .dist-info).
func (d *dist) source(rel string) string {
	switch d.kind {
	case "wheel":
		return zipx.MemberPath(d.input, rel)
	case "installed":
		return filepath.Join(filepath.Dir(filepath.Clean(d.input)), filepath.FromSlash(rel))
	}
	return filepath.Join(d.input, filepath.FromSlash(rel))
}

// scrub names the distribution's files in p's findings and notes as
// source does (WHEEL!/member for a wheel), never by their staged copies
// in the work directory, which is gone when the command ends.
func (d *dist) scrub(p *Plan) {
	prefix := d.root + string(filepath.Separator)
	fix := func(s string) string {
		for {
			i := strings.Index(s, prefix)
			if i < 0 {
				return s
			}
			j := i + len(prefix)
			for j < len(s) && !strings.ContainsRune(" \t\n,;:()'\"", rune(s[j])) {
				j++
			}
			s = s[:i] + d.source(filepath.ToSlash(s[i+len(prefix):j])) + s[j:]
		}
	}
	for i := range p.Findings {
		f := &p.Findings[i]
		f.Message, f.Fix, f.Library = fix(f.Message), fix(f.Fix), fix(f.Library)
	}
	for i := range p.Notes {
		p.Notes[i] = fix(p.Notes[i])
	}
}

// errAt is err about the distribution's file rel, named by source.
func (d *dist) errAt(rel string, err error) error {
	return fmt.Errorf("%s: %w", d.source(rel), err)
}

// stagedError is an error about a staged copy, reworded to name the
// distribution's file; it unwraps to the original.
type stagedError struct {
	msg string
	err error
}

func (e *stagedError) Error() string { return e.msg }
func (e *stagedError) Unwrap() error { return e.err }

// leftAlone reports whether fp's NEEDED entry name was left alone (--ignore).
func (fp *FilePlan) leftAlone(name string) bool {
	for _, n := range fp.Needed {
		if n.Name == name && n.Class == Ignored {
			return true
		}
	}
	return false
}

// stillInWheel reports the target libraries fp was pointed at that its
// closure still finds in the wheel: a copy with the target's own file name
// in a directory the RUNPATH keeps for other in-wheel libraries shadows
// the target until it is dropped.
func stillInWheel(d *dist, fp *FilePlan, res *rpath.Result) []finding.Finding {
	var out []finding.Finding
	for _, n := range fp.Needed {
		name := n.Replacement
		if name == "" && n.Class == Target {
			name = n.Name
		}
		if name == "" {
			continue
		}
		for _, dep := range res.Root.Deps {
			rel, err := filepath.Rel(d.root, dep.Path)
			if dep.Name != name || dep.Path == "" || err != nil || !filepath.IsLocal(rel) {
				continue
			}
			out = append(out, finding.Finding{Rule: "shadowed-target", Severity: finding.SeverityError, File: fp.Path, Library: name,
				Message: fmt.Sprintf("%s is pointed at the target's %s, but its RUNPATH still finds the wheel's own %s first", fp.Path, name, filepath.ToSlash(rel)),
				Fix:     "pass --drop-bundled to remove the copy (or --ignore it to keep using it)"})
		}
	}
	return out
}

func readRecord(p string) ([]record.Entry, error) {
	b, err := regfile.ReadFile(p)
	if err != nil {
		return nil, err
	}
	return record.Parse(string(b)), nil
}
