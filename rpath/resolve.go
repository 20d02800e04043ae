// Package rpath resolves the dependency closure of an ELF file the way
// glibc's ld.so does, without executing or loading anything, and records for
// every NEEDED entry where it was found, by which rule, every path tried and
// every candidate rejected with the reason.
//
// Search order for a NEEDED name without a slash (glibc elf/dl-load.c,
// _dl_map_object), for the object X that needs it:
//
//  1. an object already loaded under that name or SONAME (or the same file);
//  2. unless X has DT_RUNPATH: DT_RPATH of X, of the object that loaded X,
//     and so on up to the root, then the root's DT_RPATH (objects with
//     DT_RUNPATH contribute no DT_RPATH);
//  3. LD_LIBRARY_PATH (only when the caller passes one);
//  4. DT_RUNPATH of X;
//  5. the caller's extra --lib-dir directories (rocmdoctor's addition);
//  6. unless X has DF_1_NODEFLIB: ld.so.cache (glibc-hwcaps entries first);
//  7. unless X has DF_1_NODEFLIB: the trusted default directories.
//
// Each directory of 2–5 and 7 is searched first in its glibc-hwcaps
// subdirectories (x86-64-v4, -v3, -v2 as far as the CPU level allows; not
// when the target's glibc is older than 2.33), then, when the target's
// glibc is older than 2.37, in its legacy hwcaps subdirectories
// (tls/haswell/avx512_1/x86_64 … x86_64 for an x86-64 object, by the CPU).
// Names containing a slash are opened as paths. Candidates whose class,
// data encoding, machine or OS ABI differ from the root object are skipped,
// as the loader skips them, and recorded with the reason.
package rpath

import (
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/rawpath"
	"github.com/rocmdoctor/rocmdoctor/internal/regfile"
)

// Rule says how a NEEDED entry was resolved.
type Rule string

const (
	RulePath          Rule = "path"            // NEEDED contains a slash
	RuleLoaded        Rule = "already-loaded"  // satisfied by an object loaded before
	RuleRPath         Rule = "rpath"           // DT_RPATH of Via
	RuleLDLibraryPath Rule = "ld-library-path" // LD_LIBRARY_PATH
	RuleRunPath       Rule = "runpath"         // DT_RUNPATH of the requesting object
	RuleLibDir        Rule = "lib-dir"         // --lib-dir
	RuleCache         Rule = "ld.so.cache"     // ld.so.cache
	RuleDefault       Rule = "default"         // trusted default directory
	RuleInterp        Rule = "interpreter"     // the dynamic loader itself (PT_INTERP), always loaded
	RuleMissing       Rule = "missing"         // not found
)

// Options configure a Resolver. The zero value resolves against the running
// system with no LD_LIBRARY_PATH.
type Options struct {
	// Root is a sysroot: every absolute path (cache, ld.so.conf, default
	// directories, absolute RPATH/RUNPATH entries) is looked up inside it.
	Root string
	// LDLibraryPath is used only when non-nil.
	LDLibraryPath []string
	// LibDirs are searched after the object's own paths, before the cache.
	LibDirs []string
	// HWCaps lists the glibc-hwcaps subdirectories to search, in priority
	// order. Nil means what the running CPU supports, unless the target's
	// glibc (libc.so.6 in the default directories) is older than 2.33,
	// which has none; an empty non-nil slice disables them.
	HWCaps []string
	// LegacyHWCaps lists the legacy hwcaps subdirectories (glibc before
	// 2.37) to search after the glibc-hwcaps ones, in priority order. Nil
	// means those of the running CPU for x86-64 objects when the target's
	// glibc is older than 2.37 (see LegacyHWCapDirs), none otherwise; an
	// empty non-nil slice disables them.
	LegacyHWCaps []string
	// Platform is the value of $PLATFORM (default by machine: "aarch64",
	// "i686", …; for x86-64 what ld.so sets for the running CPU: "haswell"
	// or "xeon_phi" on Intel CPUs that qualify, "x86_64" otherwise).
	Platform string
	// Lib is the value of $LIB (default: "lib/<multiarch triplet>" when the
	// root has that directory, else "lib64"/"lib").
	Lib string
	// CachePath overrides <root>/etc/ld.so.cache; NoCache disables the cache.
	CachePath string
	NoCache   bool
	// DefaultDirs overrides the trusted directories for the machine.
	DefaultDirs []string
	// Files, when set, is shared by every Resolver given it (each parses a
	// file once per cache instead of once per Resolver); nil gives the
	// Resolver its own.
	Files *FileCache
	// Warn, when set, is told what resolution works around instead of
	// failing: an ld.so.cache that exists but cannot be read or parsed
	// (ld.so.conf's directories are searched instead, as they would be
	// by ld.so). A missing cache, normal in a sysroot, is not reported.
	// It is called once per FileCache, from the goroutine resolving.
	Warn func(msg string)
}

// KeepWarnings makes what o's resolvers warn of also land in *into, once
// each (for a report), then reach the Warn o had. Resolvers made from o
// afterwards may run concurrently; read *into once they are done.
func (o *Options) KeepWarnings(into *[]string) {
	var mu sync.Mutex
	caller := o.Warn
	o.Warn = func(msg string) {
		mu.Lock()
		seen := slices.Contains(*into, msg)
		if !seen {
			*into = append(*into, msg)
		}
		mu.Unlock()
		// (Each once: several resolvers made from these options, one for
		// the system and one for the target, meet the same damaged cache.)
		if caller != nil && !seen {
			caller(msg)
		}
	}
}

// Attempt is one candidate path the search looked at.
type Attempt struct {
	Path   string `json:"path"`
	Rule   Rule   `json:"rule"`
	Result string `json:"result"` // "found", "absent", or the rejection reason
	// Stops: the loader fails on this candidate instead of passing over
	// it, and searches no further (glibc's open_verify errors).
	Stops bool `json:"stops,omitempty"`
}

// Dep is one NEEDED entry of an object and how it resolved.
type Dep struct {
	Name   string  `json:"name"`
	Object *Object `json:"-"`
	Path   string  `json:"path,omitempty"` // resolved path, "" when missing
	Rule   Rule    `json:"rule"`
	// Via names the object whose DT_RPATH supplied the directory (rule rpath).
	Via string `json:"via,omitempty"`
	// HWCaps is the glibc-hwcaps or legacy hwcaps subdirectory the
	// library was found in ("x86-64-v3", "tls/x86_64"); LegacyHWCaps
	// says it was a legacy one.
	HWCaps       string    `json:"hwcaps,omitempty"`
	LegacyHWCaps bool      `json:"legacy_hwcaps,omitempty"`
	Tried        []Attempt `json:"tried,omitempty"`
	Rejected     []Attempt `json:"rejected,omitempty"`
}

// Missing reports whether the dependency could not be resolved.
func (d *Dep) Missing() bool { return d.Object == nil }

// Object is one loaded object of the closure.
type Object struct {
	Path     string   `json:"path"`
	Soname   string   `json:"soname,omitempty"`
	Needed   []string `json:"needed"`
	RPath    []string `json:"rpath,omitempty"`
	RunPath  []string `json:"runpath,omitempty"`
	NoDefLib bool     `json:"nodeflib,omitempty"`
	// Static is set for a file without a dynamic section: a statically
	// linked executable, or an object file, which ld.so never loads.
	Static bool `json:"static,omitempty"`
	// PIE is set for a position-independent executable (DF_1_PIE), which
	// is a shared object by its type.
	PIE    bool        `json:"pie,omitempty"`
	Header elfx.Header `json:"-"`
	Deps   []*Dep      `json:"deps"`
	Loader *Object     `json:"-"` // object whose NEEDED loaded this one; nil for the root
	Depth  int         `json:"depth"`
	names  []string
	origin string
	id     fileID
	loaded bool // for the interpreter: joined the closure
	interp string
	// real is the file to open under a sysroot, where Path's symbolic
	// links lead inside the root ("" when that is Path itself).
	real string
}

// Result is a resolved closure.
type Result struct {
	Root *Object
	// Interp is the dynamic loader (the root's PT_INTERP, or the machine's
	// default loader for a library); it joins Objects when first needed.
	Interp *Object
	// InterpProblem says why the kernel would refuse to start the root
	// with its PT_INTERP ("not found", "not an ELF file", another
	// machine, …); "" when it has none or it will do.
	InterpProblem string
	// Objects are in load order (breadth-first, like ld.so).
	Objects []*Object
	// setup is Interp's trusted directories and cache (nil: not a glibc
	// loader rocmdoctor can read, or none: the machine's usual ones).
	setup *loaderSetup
}

// loaderSetup is a LoaderSetup and the loader file it is of.
type loaderSetup struct {
	LoaderSetup
	file string
}

// Missing returns the unresolved dependencies in load order.
func (r *Result) Missing() []*Dep {
	var out []*Dep
	for _, o := range r.Objects {
		for _, d := range o.Deps {
			if d.Missing() {
				out = append(out, d)
			}
		}
	}
	return out
}

// Open opens the object's file for reading its symbols or sections.
func (o *Object) Open() (*elfx.File, error) { return elfx.Open(o.FilePath()) }

// FilePath is the path of the object's file on this machine: Path, or,
// under a sysroot (Options.Root), the file that Path's symbolic links
// lead to inside the root (an absolute link target is taken inside it,
// as for a process chrooted there: /lib64/ld-linux-x86-64.so.2 ->
// /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 in a Debian root).
func (o *Object) FilePath() string {
	if o.real != "" {
		return o.real
	}
	return o.Path
}

// Interpreter is the object's PT_INTERP, "" when it has none.
func (o *Object) Interpreter() string { return o.interp }

// ID is the object's file identity (device and inode; zero where the
// system has none): one file reached through several paths has one ID.
func (o *Object) ID() elfx.FileID { return o.id }

// FlatEntry is one line of the ldd-style flat list.
type FlatEntry struct {
	Name string `json:"name"`
	Path string `json:"path,omitempty"` // "" when not found
	Rule Rule   `json:"rule"`
}

// Flat lists each dependency once in load order, like ldd: the first
// NEEDED name that brought each object in, then missing names.
func (r *Result) Flat() []FlatEntry {
	var out []FlatEntry
	seen := map[*Object]bool{r.Root: true}
	missing := map[string]bool{}
	for _, o := range r.Objects {
		for _, d := range o.Deps {
			switch {
			case d.Missing():
				if !missing[d.Name] {
					missing[d.Name] = true
					out = append(out, FlatEntry{Name: d.Name, Rule: RuleMissing})
				}
			case !seen[d.Object]:
				seen[d.Object] = true
				out = append(out, FlatEntry{Name: d.Name, Path: d.Path, Rule: d.Rule})
			}
		}
	}
	return out
}

type fileID = elfx.FileID

// Resolver resolves closures. It caches the cache, ld.so.conf and parsed
// headers; it is not safe for concurrent use.
type Resolver struct {
	opts     Options
	files    *FileCache
	caches   map[*loaderSetup]*Cache // by the loader that reads it (nil: the usual one)
	cacheErr error
	defaults []string
	hwcaps   []string
	isa      uint32

	glibcOnce  sync.Once
	glibcMinor int        // minor version of the target's glibc 2.x, -1 unknown
	optsLegacy LegacyCaps // the cache's view of opts.LegacyHWCaps

	searches map[searchKey][]step // remembered searches (searchKey)
	origins  map[string]string    // originOf, by path
	tried    []Attempt            // the block Dep.Tried lists are cut from (closure)
	steps    []step               // the search being remembered, when non-nil
}

// New returns a Resolver for opts. A Resolver remembers what it has read
// and stat'ed (in its FileCache) and the searches it has made (searchKey):
// make a new one, with a new cache, when the files may have changed since.
func New(opts Options) *Resolver {
	r := &Resolver{opts: opts, files: opts.Files}
	if r.files == nil {
		r.files = NewFileCache()
	}
	if opts.HWCaps != nil {
		r.hwcaps = opts.HWCaps
	} else {
		r.hwcaps = HostHWCaps()
	}
	r.isa = isaLevelBits(r.hwcaps)
	return r
}

// inRoot maps an absolute path into the sysroot. It is not cleaned: a
// ".." is resolved where the lookup reaches it (by RealInRoot, which stops
// it at the root), after the links before it, as the kernel resolves it.
func (r *Resolver) inRoot(p string) string {
	if r.opts.Root == "" || !filepath.IsAbs(p) {
		return p
	}
	return strings.TrimRight(r.opts.Root, "/") + p
}

// insideRoot reports whether the clean path p lies inside the sysroot
// (always, without one).
func (r *Resolver) insideRoot(p string) bool {
	root := filepath.Clean(r.opts.Root)
	if r.opts.Root == "" || root == "/" {
		return true
	}
	return p == root || strings.HasPrefix(p, root+"/")
}

// absolute makes a relative path absolute as the kernel resolves it: from
// the working directory's physical path (getcwd), not $PWD, and without
// cleaning. Absolute paths are returned as they are.
func absolute(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	wd, err := syscall.Getwd()
	if err != nil {
		return p
	}
	return rawpath.Join(wd, p)
}

// real is the file a path inside the sysroot names when its symbolic
// links are followed inside the root (rootReal); p itself without one.
func (r *Resolver) real(p string) (string, error) {
	if r.opts.Root == "" || !filepath.IsAbs(p) {
		return p, nil
	}
	return r.files.rootReal(r.opts.Root, p)
}

// maxLinks is how many symbolic links a path may lead through (Linux's
// MAXSYMLINKS), beyond which the lookup fails with ELOOP.
const maxLinks = 40

// rootReal is RealInRoot, remembered by path.
func (c *FileCache) rootReal(root, p string) (string, error) {
	c.mu.Lock()
	got, ok := c.reals[p]
	c.mu.Unlock()
	if ok {
		return got.path, got.err
	}
	var res realResult
	res.path, res.err = RealInRoot(root, p)
	c.mu.Lock()
	c.reals[p] = res
	c.mu.Unlock()
	return res.path, res.err
}

// RealInRoot resolves the symbolic links of p, a path inside the sysroot
// root, as the kernel does for a process chrooted at root: an absolute
// target starts again at root, and ".." stops there (a link to
// /opt/rocm-6.2.0 in the root leads to root/opt/rocm-6.2.0, never to
// this machine's). Where a component does not exist, the rest is appended
// unresolved (a stat of the result then fails as the lookup would). A
// path outside root, or root "/", is returned as it is.
func RealInRoot(root, p string) (string, error) {
	root = filepath.Clean(root)
	if root == "/" {
		return p, nil
	}
	rest, ok := strings.CutPrefix(p, root)
	if !ok || rest != "" && rest[0] != '/' {
		return p, nil
	}
	cur, todo, links := root, strings.Split(rest, "/"), 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			if cur != root {
				cur = filepath.Dir(cur)
			}
			continue
		}
		next := cur + "/" + name
		fi, err := os.Lstat(next)
		if err != nil {
			// Not cleaned: a ".." after the missing component must not
			// lift the path out of the root (the lookup fails there).
			return strings.Join(append([]string{next}, todo...), "/"), nil
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if links++; links > maxLinks {
			return "", &fs.PathError{Op: "stat", Path: p, Err: syscall.ELOOP}
		}
		if filepath.IsAbs(target) {
			cur = root
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return cur, nil
}

type realResult struct {
	path string
	err  error
}

// FileInRoot maps a file named on a command line into the sysroot root:
// an absolute path not already inside it is taken inside it (with root
// /x/sys, /usr/bin/app becomes /x/sys/usr/bin/app, /x/sys/usr/bin/app
// stays, and /x/sysroot/app, which only shares a string prefix, becomes
// /x/sys/x/sysroot/app). Relative paths and an empty root leave p as it is.
func FileInRoot(root, p string) string {
	if root == "" || !filepath.IsAbs(p) {
		return p
	}
	if rel, err := filepath.Rel(root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return p
	}
	return filepath.Join(root, p)
}

// Resolve computes the closure of the ELF file at path.
func (r *Resolver) Resolve(ctx context.Context, path string) (*Result, error) {
	root, err := r.topObject(path)
	if err != nil {
		return nil, err
	}
	res := &Result{Root: root, Objects: []*Object{root}}
	res.Interp, res.InterpProblem = r.loadInterp(root)
	res.setup = r.setupOf(res.Interp)
	if err := r.closure(ctx, res, 0); err != nil {
		return nil, err
	}
	return res, nil
}

// ResolveIn computes what loading the ELF file at path with dlopen() adds
// to the program whose closure is host: the objects host already has stay
// (a NEEDED entry one of them satisfies is already-loaded), and the file's
// other dependencies are searched with its own paths (its DT_RUNPATH; or
// its DT_RPATH and then the program's, as ld.so does for dlopen) and join
// after them, in load order. The result's Root is still the program;
// module is the index in its Objects of the loaded file (one of host's
// when the program already has that file). host is not changed.
func (r *Resolver) ResolveIn(ctx context.Context, host *Result, path string) (res *Result, module int, err error) {
	o, err := r.topObject(path)
	if err != nil {
		return nil, 0, err
	}
	if reason := Incompatible(host.Root.Header, o.Header); reason != "" {
		return nil, 0, fmt.Errorf("%s cannot be loaded into %s: %s", path, host.Root.Path, reason)
	}
	for i, h := range host.Objects {
		if h.id == o.id {
			return host, i, nil
		}
	}
	module = len(host.Objects)
	res = &Result{Root: host.Root, Interp: host.Interp, setup: host.setup, Objects: append(host.Objects[:module:module], o)}
	if in := host.Interp; in != nil && !in.loaded {
		cp := *in // resolveOne marks the loader loaded when it is needed
		res.Interp = &cp
	}
	if err := r.closure(ctx, res, module); err != nil {
		return nil, 0, err
	}
	return res, module, nil
}

// Lookup finds name as the process res describes would load it for obj,
// one of its objects: as a NEEDED entry of obj, or as dlopen(name) called
// from code in obj (glibc maps both with the same search: an object
// already loaded under that name, else obj's DT_RPATH chain unless it has
// a DT_RUNPATH, LD_LIBRARY_PATH, obj's DT_RUNPATH, the cache and the
// trusted directories). The returned Dep says where it was found or, when
// missing, what was rejected; what it finds does not join res, which is
// not changed.
func (r *Resolver) Lookup(res *Result, obj *Object, name string) *Dep {
	cp := *res
	cp.Objects = res.Objects[:len(res.Objects):len(res.Objects)]
	if in := res.Interp; in != nil && !in.loaded {
		c := *in // resolveOne marks the loader loaded when it is the one
		cp.Interp = &c
	}
	dep := &Dep{}
	r.resolveOne(&cp, obj, dep, name)
	return dep
}

// topObject is the object for a file loaded by name (the program, or a
// dlopen()ed module): no loader, its real directory as $ORIGIN.
func (r *Resolver) topObject(path string) (*Object, error) {
	file, err := r.real(path)
	if err != nil {
		return nil, err
	}
	pf, id, err := r.parse(file, nil)
	if err != nil {
		return nil, err
	}
	o := r.newObject(pf, id, path, nil)
	if file != path {
		o.real = file
	}
	if dir, err := r.files.realDir(file); err == nil {
		o.origin = dir
	}
	if abs, err := filepath.Abs(o.origin); err == nil {
		o.origin = abs
	}
	if o.Soname != "" {
		o.names = append(o.names, o.Soname)
	}
	return o, nil
}

// closure resolves the NEEDED entries of res.Objects from index from on,
// breadth-first, appending what they load.
func (r *Resolver) closure(ctx context.Context, res *Result, from int) error {
	for i := from; i < len(res.Objects); i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		obj := res.Objects[i]
		// One allocation for the object's dependencies and one for the
		// list of them: a scan resolves some 16,000 per run.
		deps := make([]Dep, len(obj.Needed))
		obj.Deps = slices.Grow(obj.Deps, len(deps))
		for k, name := range obj.Needed {
			dep := &deps[k]
			// The candidates tried are appended to the free end of a
			// block shared by the dependencies resolved one after the
			// other (one allocation for many lists of one or two), and
			// the list is then capped so that it owns what it holds.
			if cap(r.tried)-len(r.tried) < 8 {
				r.tried = make([]Attempt, 0, 256)
			}
			dep.Tried = r.tried[len(r.tried):len(r.tried)]
			r.resolveOne(res, obj, dep, name)
			dep.Tried = dep.Tried[:len(dep.Tried):len(dep.Tried)]
			if len(dep.Tried) > 0 && &dep.Tried[0] == &r.tried[:len(r.tried)+1][len(r.tried)] {
				r.tried = r.tried[:len(r.tried)+len(dep.Tried)]
			}
			if len(dep.Tried) == 0 {
				dep.Tried = nil
			}
			obj.Deps = append(obj.Deps, dep)
		}
	}
	return nil
}

// parsed is what the resolver needs from a file: header and dynamic
// section. Files are parsed once per Resolver, keyed by device and inode.
type parsed struct {
	hdr      elfx.Header
	soname   string
	needed   []string
	rpath    []string
	runpath  []string
	nodeflib bool
	interp   string
	static   bool // no dynamic section
	pie      bool // DF_1_PIE
	noLoad   bool // no PT_LOAD
	// head is the file's ELF header as it is (52 bytes of an ELF32 one),
	// for glibc's open_verify (loaderVerdict).
	head [64]byte
}

// FileCache holds what resolution reads from each file (header, dynamic
// section), keyed by device and inode. It is safe for concurrent use, so
// resolvers working in parallel can share one (Options.Files).
//
// It also remembers, by path, what stat said about candidate files and
// where directories really are: a scan of a whole prefix asks the same
// questions about libc and the loader for every file it resolves. The
// answers are taken to hold for the life of the cache.
type FileCache struct {
	mu    sync.Mutex
	m     map[fileID]*parsed
	busy  map[fileID]chan struct{} // parses in flight
	stats map[string]statResult
	reals map[string]realResult // rootReal
	dirs  map[string]string
	// notLinks are paths known not to be symbolic links (KnowNotLink).
	notLinks map[string]struct{}
	// once holds what every resolver sharing the cache reads the same way
	// at its start (the ld.so.cache, the C library's version), by what and
	// path: a scan's workers each read them otherwise.
	once map[onceKey]*onceValue

	onParse         func(*elfx.File)
	onParseSections bool // the files handed to onParse have their sections
}

type onceKey struct{ what, path string }

type onceValue struct {
	once sync.Once
	v    any
}

// remember returns fn's result for key, calling fn once per cache (other
// callers asking meanwhile wait for it).
func (c *FileCache) remember(key onceKey, fn func() any) any {
	c.mu.Lock()
	o := c.once[key]
	if o == nil {
		o = &onceValue{}
		c.once[key] = o
	}
	c.mu.Unlock()
	o.once.Do(func() { o.v = fn() })
	return o.v
}

type statResult struct {
	fi  os.FileInfo
	err error
}

// NewFileCache returns an empty cache.
func NewFileCache() *FileCache {
	return &FileCache{m: map[fileID]*parsed{}, busy: map[fileID]chan struct{}{},
		stats: map[string]statResult{}, reals: map[string]realResult{}, dirs: map[string]string{}, notLinks: map[string]struct{}{}, once: map[onceKey]*onceValue{}}
}

// KnowNotLink records that path is not a symbolic link, as a directory
// walk that listed it as a regular file knows: resolving it then needs no
// lstat to find the directory $ORIGIN stands for.
func (c *FileCache) KnowNotLink(path string) {
	c.mu.Lock()
	c.notLinks[path] = struct{}{}
	c.mu.Unlock()
}

// OnParse has fn called with each file the cache parses, while the file is
// open: once per file (resolvers sharing the cache wait for a parse in
// flight rather than parse the file again), from the goroutine parsing it.
// A caller that needs more of every resolved file (symcheck's symbol
// tables) reads it then instead of opening it again. Files are opened for
// what the loader reads (elfx.OpenSegments: their dynamic symbol tables
// are found through the dynamic segment) unless sections is set, when
// their section headers are read too (device code, CK instances). Set it
// before the cache is used.
func (c *FileCache) OnParse(fn func(*elfx.File), sections bool) {
	c.onParse, c.onParseSections = fn, sections
}

// stat is os.Stat, remembered.
func (c *FileCache) stat(p string) (os.FileInfo, error) {
	c.mu.Lock()
	r, ok := c.stats[p]
	c.mu.Unlock()
	if !ok {
		r.fi, r.err = os.Stat(p)
		c.mu.Lock()
		c.stats[p] = r
		c.mu.Unlock()
	}
	return r.fi, r.err
}

// KnowStat records fi as what os.Stat says of p, unless there is an
// answer already, from a caller that has the file open (its fstat):
// resolving p then needs no stat.
func (c *FileCache) KnowStat(p string, fi os.FileInfo) {
	c.mu.Lock()
	if _, ok := c.stats[p]; !ok {
		c.stats[p] = statResult{fi: fi}
	}
	c.mu.Unlock()
}

// realDir is the directory a file at path really lives in (symbolic links
// resolved), as filepath.Dir(filepath.EvalSymlinks(path)); directories are
// resolved once.
func (c *FileCache) realDir(path string) (string, error) {
	if filepath.Clean(path) != path {
		real, err := filepath.EvalSymlinks(path)
		return filepath.Dir(real), err
	}
	c.mu.Lock()
	_, notLink := c.notLinks[path]
	c.mu.Unlock()
	if !notLink {
		st, err := os.Lstat(path)
		if err != nil {
			return "", err
		}
		if st.Mode()&os.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(path)
			return filepath.Dir(real), err
		}
	}
	dir := filepath.Dir(path)
	c.mu.Lock()
	real, ok := c.dirs[dir]
	c.mu.Unlock()
	if ok {
		return real, nil
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.dirs[dir] = real
	c.mu.Unlock()
	return real, nil
}

// begin returns the parse of the file id, waiting for one in flight.
// Without one, the caller is to parse the file and must call end.
func (c *FileCache) begin(id fileID) (*parsed, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if p, ok := c.m[id]; ok {
			return p, true
		}
		ch, busy := c.busy[id]
		if !busy {
			c.busy[id] = make(chan struct{})
			return nil, false
		}
		// A failed parse leaves nothing: the waiter then tries itself.
		c.mu.Unlock()
		<-ch
		c.mu.Lock()
	}
}

// end records the parse begun for id (p is nil when it failed).
func (c *FileCache) end(id fileID, p *parsed) {
	c.mu.Lock()
	if p != nil {
		c.m[id] = p
	}
	ch := c.busy[id]
	delete(c.busy, id)
	c.mu.Unlock()
	close(ch)
}

// parseOpen parses f, which is open, for id (zero: not cached).
func (c *FileCache) parseOpen(f *elfx.File, id fileID) (p *parsed, err error) {
	if id != (fileID{}) {
		defer func() { c.end(id, p) }()
	}
	if p, err = parseFile(f); err != nil {
		return nil, err
	}
	if c.onParse != nil {
		c.onParse(f)
	}
	return p, nil
}

// Prime records what resolution needs from f, a file the caller already
// has open (made by elfx.Open), so resolving it does not open it again.
func (r *Resolver) Prime(f *elfx.File) error {
	st := f.FileInfo()
	if st == nil {
		return fmt.Errorf("%s: not opened from a file", f.Path)
	}
	id := elfx.IDOf(st)
	if id == (fileID{}) {
		return nil
	}
	// What the caller's open found is what os.Stat would say of the path
	// (both follow symbolic links): resolving it needs no stat.
	r.files.KnowStat(f.Path, st)
	if _, ok := r.files.begin(id); ok {
		return nil
	}
	_, err := r.files.parseOpen(f, id)
	return err
}

// parse reads the header and dynamic section of path, once per file. st
// is the file's stat when the caller has it.
func (r *Resolver) parse(path string, st os.FileInfo) (*parsed, fileID, error) {
	if st == nil {
		var err error
		if st, err = r.files.stat(path); err != nil {
			return nil, fileID{}, err
		}
	}
	id := elfx.IDOf(st)
	if id != (fileID{}) {
		if p, ok := r.files.begin(id); ok {
			return p, id, nil
		}
	}
	// What the loader reads is all resolution needs; a cache whose files
	// are also handed on may need their sections (OnParse).
	open := elfx.OpenSegments
	if r.files.onParse != nil && r.files.onParseSections {
		open = elfx.Open
	}
	f, err := open(path)
	if err != nil {
		if id != (fileID{}) {
			r.files.end(id, nil)
		}
		return nil, id, err
	}
	defer f.Close()
	p, err := r.files.parseOpen(f, id)
	return p, id, err
}

func parseFile(f *elfx.File) (*parsed, error) {
	p := &parsed{hdr: f.Header, needed: []string{}}
	if n, err := f.ReaderAt().ReadAt(p.head[:], 0); n < 52 {
		return nil, fmt.Errorf("%s: reading the ELF header: %w", f.Path, err)
	}
	p.noLoad = !slices.ContainsFunc(f.ELF().Progs, func(pr *elf.Prog) bool { return pr.Type == elf.PT_LOAD })
	var err error
	if p.interp, err = f.Interp(); err != nil {
		return nil, err
	}
	d, err := f.Dynamic()
	switch {
	case err == nil:
		p.soname = d.Soname
		p.needed = append(p.needed, d.Needed...)
		// glibc ignores DT_RPATH when DT_RUNPATH is present.
		if d.HasRunPath {
			p.runpath = d.RunPathList()
		} else if d.HasRPath {
			p.rpath = d.RPathList()
		}
		p.nodeflib = d.Flags1&elf.DF_1_NODEFLIB != 0
		p.pie = d.Flags1&elf.DF_1_PIE != 0
	case errors.Is(err, elfx.ErrNoDynamic):
		p.static = true
	default:
		return nil, err
	}
	return p, nil
}

func (r *Resolver) newObject(p *parsed, id fileID, path string, loader *Object) *Object {
	o := &Object{Path: path, Header: p.hdr, Loader: loader, id: id,
		Soname: p.soname, Needed: p.needed, RPath: p.rpath, RunPath: p.runpath, NoDefLib: p.nodeflib, interp: p.interp,
		Static: p.static, PIE: p.pie, Deps: []*Dep{}}
	if loader != nil {
		o.Depth = loader.Depth + 1
	}
	o.origin = r.originOf(path)
	return o
}

// originOf is the directory of path made absolute: $ORIGIN for an object
// loaded from path. It is remembered by path (a scan's closures create
// the same library objects thousands of times, and cleaning the path
// twice for each was ~4% of the instructions of check).
func (r *Resolver) originOf(path string) string {
	if o, ok := r.origins[path]; ok {
		return o
	}
	o := rawpath.Dir(absolute(path))
	if !filepath.IsAbs(path) {
		return o // relative to a working directory that may change
	}
	if r.origins == nil {
		r.origins = map[string]string{}
	}
	if len(r.origins) < maxSearches {
		r.origins[path] = o
	}
	return o
}

// loadInterp opens the dynamic loader that ld.so itself is: the root's
// PT_INTERP, or the machine's default loader when the root has none. When
// the root names one that the kernel would refuse to run the program
// with, problem says why (and the object is nil).
func (r *Resolver) loadInterp(root *Object) (o *Object, problem string) {
	p := root.interp
	if p == "" {
		p = defaultInterp(root.Header)
	}
	if p == "" {
		return nil, ""
	}
	pf, id, real, problem := r.interpreter(root.Header, p)
	if pf == nil {
		if root.interp == "" {
			problem = "" // no PT_INTERP: nothing is run with the default
		}
		return nil, problem
	}
	o = r.newObject(pf, id, r.inRoot(p), nil)
	if real != o.Path {
		o.real = real
	}
	o.names = []string{p}
	if o.Soname != "" {
		o.names = append(o.names, o.Soname)
	}
	return o, ""
}

// interpreter reads the program interpreter p of a program with header
// want as the kernel's execve checks it (fs/binfmt_elf.c: open_exec, then
// the ELF magic, the machine and the type), or says why it would refuse
// to start the program with it.
func (r *Resolver) interpreter(want elfx.Header, p string) (pf *parsed, id fileID, file, problem string) {
	if !filepath.IsAbs(p) {
		return nil, id, "", "a relative path, which the kernel opens against the working directory of whoever runs the program"
	}
	file, err := r.real(r.inRoot(p))
	var st os.FileInfo
	if err == nil {
		st, err = r.files.stat(file)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, id, "", "not found"
	case err != nil:
		return nil, id, "", err.Error()
	case st.IsDir():
		return nil, id, "", "a directory"
	case !st.Mode().IsRegular():
		return nil, id, "", "not a regular file"
	case st.Mode().Perm()&0o111 == 0:
		return nil, id, "", "not executable (no x permission)"
	}
	pf, id, err = r.parse(file, st)
	switch {
	case errors.Is(err, elfx.ErrNotELF):
		return nil, id, "", "not an ELF file"
	case err != nil:
		return nil, id, "", err.Error()
	case pf.hdr.Machine != want.Machine:
		return nil, id, "", Incompatible(want, pf.hdr)
	case pf.hdr.Type != elf.ET_DYN && pf.hdr.Type != elf.ET_EXEC:
		return nil, id, "", fmt.Sprintf("%s, not a program or shared object", pf.hdr.Type)
	case Incompatible(want, pf.hdr) != "":
		// The kernel checks the machine; ld.so itself must match the
		// program's class and byte order to load it.
		return nil, id, "", Incompatible(want, pf.hdr)
	}
	return pf, id, file, ""
}

// DefaultInterp is the usual program interpreter (PT_INTERP) of programs
// with header h on Linux, "" for machines it does not know.
func DefaultInterp(h elfx.Header) string { return defaultInterp(h) }

// UsableDefaultInterp is DefaultInterp(h) when that loader is there (in
// the sysroot) and the kernel would start a program with header h with
// it; "" otherwise (NixOS has no /lib64/ld-linux-x86-64.so.2).
func (r *Resolver) UsableDefaultInterp(h elfx.Header) string {
	p := defaultInterp(h)
	if p == "" {
		return ""
	}
	if pf, _, _, _ := r.interpreter(h, p); pf == nil {
		return ""
	}
	return p
}

func defaultInterp(h elfx.Header) string {
	switch {
	case h.Machine == elf.EM_X86_64 && h.Class == elf.ELFCLASS64:
		return "/lib64/ld-linux-x86-64.so.2"
	case h.Machine == elf.EM_386:
		return "/lib/ld-linux.so.2"
	case h.Machine == elf.EM_AARCH64:
		return "/lib/ld-linux-aarch64.so.1"
	case h.Machine == elf.EM_PPC64 && h.Data == elf.ELFDATA2LSB:
		return "/lib64/ld64.so.2"
	}
	return ""
}

// matchLoaded implements _dl_name_match_p over the loaded objects.
func matchLoaded(res *Result, name string) *Object {
	for _, o := range res.Objects {
		for _, n := range o.names {
			if n == name {
				return o
			}
		}
	}
	return nil
}

// resolveOne resolves obj's NEEDED entry name into dep (zero).
func (r *Resolver) resolveOne(res *Result, obj *Object, dep *Dep, name string) {
	dep.Name = name
	if o := matchLoaded(res, name); o != nil {
		dep.Object, dep.Path, dep.Rule = o, o.Path, RuleLoaded
		return
	}
	if in := res.Interp; in != nil && !in.loaded {
		for _, n := range in.names {
			if n == name {
				in.loaded, in.Loader, in.Depth = true, obj, obj.Depth+1
				res.Objects = append(res.Objects, in)
				dep.Object, dep.Path, dep.Rule = in, in.Path, RuleInterp
				return
			}
		}
	}
	if strings.Contains(name, "/") {
		p := r.hostPath(name, obj)
		if r.try(res, obj, dep, p, RulePath, "", "", false) {
			return
		}
		dep.Rule = RuleMissing
		return
	}
	key, ok := r.searchKeyOf(res, obj, name)
	if !ok {
		r.search(res, obj, dep, name)
		return
	}
	if steps, seen := r.searches[key]; seen {
		if r.replay(res, obj, dep, steps) {
			return
		}
		*dep = Dep{Name: name, Tried: dep.Tried[:0]} // a step this closure needs more of: search
	}
	r.steps = []step{}
	r.search(res, obj, dep, name)
	if r.searches == nil {
		r.searches = map[searchKey][]step{}
	}
	if len(r.searches) < maxSearches {
		r.searches[key] = r.steps
	}
	r.steps = nil
}

// search looks for name along the loader's path list (the steps after
// the already-loaded objects and the loader itself).
func (r *Resolver) search(res *Result, obj *Object, dep *Dep, name string) {
	// 2. DT_RPATH chain, unless the requesting object has DT_RUNPATH.
	if len(obj.RunPath) == 0 {
		seenRoot := false
		for l := obj; l != nil; l = l.Loader {
			seenRoot = seenRoot || l == res.Root
			if r.searchDirs(res, obj, dep, l.RPath, l, RuleRPath, name) {
				return
			}
		}
		if !seenRoot && r.searchDirs(res, obj, dep, res.Root.RPath, res.Root, RuleRPath, name) {
			return
		}
	}
	// 3. LD_LIBRARY_PATH.
	if r.opts.LDLibraryPath != nil && r.searchDirs(res, obj, dep, r.opts.LDLibraryPath, nil, RuleLDLibraryPath, name) {
		return
	}
	// 4. DT_RUNPATH of the requesting object only.
	if r.searchDirs(res, obj, dep, obj.RunPath, obj, RuleRunPath, name) {
		return
	}
	// 5. --lib-dir.
	if r.searchDirs(res, obj, dep, r.opts.LibDirs, nil, RuleLibDir, name) {
		return
	}
	if !obj.NoDefLib {
		// 6. ld.so.cache.
		if c := r.loadCache(res); c != nil {
			glibcHW, _, legacy := r.hwcapDirs(res)
			if e, ok := c.Lookup(name, cacheFlags(res.Root.Header), glibcHW, r.isa, legacy); ok {
				if r.try(res, obj, dep, r.inRoot(e.Path), RuleCache, "", e.HWCaps, false) {
					return
				}
			}
		}
		// 7. Trusted directories.
		if r.searchDirs(res, obj, dep, r.trustedDirs(res), nil, RuleDefault, name) {
			return
		}
	}
	dep.Rule = RuleMissing
}

// A search for a NEEDED name goes the same way every time the same object
// (the same search paths, $ORIGIN and ABI) asks for it under roots of one
// ABI, whatever else the closure holds: a scan of a prefix resolves
// libc.so.6 for every library of every closure. The Resolver remembers
// each search as the candidates it tried (steps) and replays them; only
// which objects are already loaded differs, and replaying asks that
// again. Searches that go through a DT_RPATH chain depend on the loaders
// and are not remembered.
type searchKey struct {
	name string
	// The requesting object's DT_RUNPATH and, when it has dynamic string
	// tokens, what they expand to: $ORIGIN and the object's ABI ($LIB,
	// $PLATFORM).
	runpath, origin string
	objABI          abiKey
	nodefLib        bool
	root            abiKey       // hwcaps, cache flags, default directories, compatibility
	loader          *loaderSetup // whose trusted directories and cache are searched (nil: none read); one per loader file and FileCache
}

type abiKey struct {
	class      elf.Class
	data       elf.Data
	osabi      elf.OSABI
	abiVersion uint8
	machine    elf.Machine
	processor  string
}

func abiOf(h elfx.Header) abiKey {
	k := abiKey{h.Class, h.Data, h.OSABI, h.ABIVersion, h.Machine, ""}
	if h.AMDGPU != nil {
		k.processor = h.AMDGPU.Processor
	}
	return k
}

// maxSearches bounds the searches a Resolver remembers (and the paths
// whose $ORIGIN it remembers).
const maxSearches = 1 << 16

// step is one candidate a search tried, with what try found out about it.
type step struct {
	path        string // as ld.so opens it (see rawpath.Join)
	show        string // path as reported: cleaned unless that names another file
	real        string // the file opened for path under a sysroot ("" for path)
	rule        Rule
	via, hwcaps string
	legacy      bool // a legacy hwcaps subdirectory
	exists      bool // a regular file
	id          fileID
	pf          *parsed // nil when not parsed (it was a loaded object)
	reject      string  // why the loader would skip it ("" for one it takes)
	// fatal: the loader does not skip it but fails, and searches no
	// further (glibc's open_verify: "ELF file OS ABI invalid", …).
	fatal bool
}

// searchKeyOf is the key of the search for name by obj, or false when
// the search depends on more (the DT_RPATH chain).
func (r *Resolver) searchKeyOf(res *Result, obj *Object, name string) (searchKey, bool) {
	k := searchKey{name: name, nodefLib: obj.NoDefLib, root: abiOf(res.Root.Header)}
	k.loader = res.setup
	switch len(obj.RunPath) {
	case 0:
		for l := obj; l != nil; l = l.Loader {
			if len(l.RPath) > 0 {
				return k, false
			}
		}
		if len(res.Root.RPath) > 0 {
			return k, false
		}
	case 1:
		k.runpath = obj.RunPath[0]
	default:
		k.runpath = strings.Join(obj.RunPath, "\x00")
	}
	if strings.Contains(k.runpath, "$") {
		k.origin, k.objABI = obj.origin, abiOf(obj.Header)
	}
	return k, true
}

// replay applies a remembered search to dep; false when a step needs
// more than was found out when it was made (a candidate that was then a
// loaded object, and here is not).
func (r *Resolver) replay(res *Result, obj *Object, dep *Dep, steps []step) bool {
	for _, s := range steps {
		done, ok := r.apply(res, obj, dep, s)
		if !ok {
			return false
		}
		if done {
			return true
		}
	}
	dep.Rule = RuleMissing
	return true
}

// searchDirs tries name in each directory (and its glibc-hwcaps
// subdirectories). via is the object whose path list this is, for $ORIGIN.
func (r *Resolver) searchDirs(res *Result, obj *Object, dep *Dep, dirs []string, via *Object, rule Rule, name string) bool {
	glibcHW, legacy, _ := r.hwcapDirs(res)
	for _, d := range dirs {
		if via != nil {
			d = r.hostPath(d, via)
		} else {
			d = r.hostPath(d, nil)
		}
		viaPath := ""
		if rule == RuleRPath && via != nil {
			viaPath = via.Path
		}
		// Subdirectories that do not exist are passed over once per
		// directory rather than tried per name, as ld.so does.
		for _, h := range glibcHW {
			sub := rawpath.Join(d, "glibc-hwcaps/"+h)
			if r.isDir(sub) && r.try(res, obj, dep, rawpath.Join(sub, name), rule, viaPath, h, false) {
				return true
			}
		}
		for _, l := range legacy {
			sub := rawpath.Join(d, l)
			if r.isDir(sub) && r.try(res, obj, dep, rawpath.Join(sub, name), rule, viaPath, l, true) {
				return true
			}
		}
		if r.try(res, obj, dep, rawpath.Join(d, name), rule, viaPath, "", false) {
			return true
		}
	}
	return false
}

func (r *Resolver) isDir(p string) bool {
	file, err := r.real(p)
	if err != nil {
		return false
	}
	st, err := r.files.stat(file)
	return err == nil && st.IsDir()
}

// hwcapDirs returns the glibc-hwcaps and the legacy hwcaps subdirectories
// that the target's loader searches in every directory for a process whose
// main object has header h (see Options.HWCaps and LegacyHWCaps).
// caps says which legacy entries of ld.so.cache the loader uses.
func (r *Resolver) hwcapDirs(res *Result) (glibcHW, legacy []string, caps LegacyCaps) {
	minor := r.glibcMinorOf(res)
	old := minor >= 0
	glibcHW = r.hwcaps
	if r.opts.HWCaps == nil && old && minor < 33 {
		glibcHW = nil
	}
	if r.opts.LegacyHWCaps != nil {
		return glibcHW, r.opts.LegacyHWCaps, r.optsLegacy
	}
	if old && minor < 37 && res.Root.Header.Machine == elf.EM_X86_64 {
		legacy = hostLegacy()
		caps = hostLegacyCaps()
	}
	return glibcHW, legacy, caps
}

// glibcMinorOf is the minor version of the glibc that loads res: its own
// loader's, from the banner ld.so carries ("stable release version 2.36"),
// else the libc.so.6 in the usual directories; -1 when unknown or not
// needed (both hwcaps lists given).
func (r *Resolver) glibcMinorOf(res *Result) int {
	r.glibcOnce.Do(func() {
		r.glibcMinor = -1
		if r.opts.HWCaps == nil || r.opts.LegacyHWCaps == nil {
			r.glibcMinor = r.findGlibcMinor(res.Root.Header)
		}
		r.optsLegacy = LegacyCapsOf(r.opts.LegacyHWCaps)
	})
	if s := res.setup; s != nil && (r.opts.HWCaps == nil || r.opts.LegacyHWCaps == nil) {
		if v := r.files.remember(onceKey{"glibc", s.file}, func() any { return GlibcMinor(s.file) }).(int); v >= 0 {
			return v
		}
	}
	return r.glibcMinor
}

// findGlibcMinor reads N from the "release version 2.N" banner of the
// libc.so.6 in the default directories for h (inside the sysroot), or -1.
func (r *Resolver) findGlibcMinor(h elfx.Header) int {
	for _, d := range r.defaultDirs(h) {
		p, err := r.real(filepath.Join(r.inRoot(d), "libc.so.6"))
		if err != nil {
			continue
		}
		if v := r.files.remember(onceKey{"glibc", p}, func() any { return GlibcMinor(p) }).(int); v >= 0 {
			return v
		}
	}
	return -1
}

// hostPath turns a search-path element or NEEDED path into a path on this
// machine: dynamic string tokens are expanded (for object o when non-nil),
// elements that were absolute in the file are placed inside the sysroot,
// $ORIGIN-based ones already point at the object's real location, and
// relative ones resolve against the working directory as in ld.so (an empty
// element means the working directory).
func (r *Resolver) hostPath(raw string, o *Object) string {
	p := raw
	if o != nil {
		p = r.expand(raw, o)
	}
	if p == "" {
		p = "." // an empty entry: the working directory
	}
	if filepath.IsAbs(raw) {
		return r.inRoot(p)
	}
	if r.opts.Root != "" && !filepath.IsAbs(p) {
		// Under a sysroot the process's working directory is not this
		// machine's: a relative name is taken from the root's "/" (its
		// ".." stops there), never from rocmdoctor's own directory.
		return r.inRoot("/" + p)
	}
	return absolute(p)
}

// try opens p as a candidate; on success the dependency is bound to it.
// legacy says p is in a legacy hwcaps subdirectory.
func (r *Resolver) try(res *Result, obj *Object, dep *Dep, p string, rule Rule, via, hwcaps string, legacy bool) bool {
	s := step{path: p, rule: rule, via: via, hwcaps: hwcaps, legacy: legacy}
	var loaded *Object
	file, err := r.real(p)
	var st os.FileInfo
	if err == nil {
		if file != p {
			s.real = file
		}
		st, err = r.files.stat(file)
	}
	if err == nil && st.IsDir() {
		// open() takes a directory; open_verify's read of it fails and
		// the load with it (EISDIR).
		s.exists, s.reject, s.fatal = true, "cannot read file data: Is a directory", true
	}
	if err == nil && st.Mode().IsRegular() {
		s.exists, s.id = true, elfx.IDOf(st)
		// The same file as a loaded object (by device and inode) needs no parse.
		if loaded = loadedAs(res, s.id); loaded == nil {
			pf, id, err := r.parse(file, st)
			s.id = id
			var skip, fatal string
			if err != nil {
				skip, fatal = unparsedVerdict(res.Root.Header, file, err)
			} else {
				s.pf = pf
				skip, fatal = openVerify(res.Root.Header, pf)
			}
			switch {
			case skip != "":
				s.reject = "skipped: " + skip
			case fatal != "":
				s.reject, s.fatal = fatal, true
			}
		}
	}
	s.show = r.shown(p, s.exists, s.id)
	if r.steps != nil {
		r.steps = append(r.steps, s)
	}
	done, _ := r.applyTo(res, obj, dep, s, loaded)
	return done
}

// shown is how candidate p (found: exists, as file id) is reported: p
// cleaned, "/opt/rocm/lib/../lib64/x" as "/opt/rocm/lib64/x", where that
// names what p names (the same file, or nothing in both cases), which is
// so unless a symbolic link comes before a ".."; p as it is otherwise, as
// ldd prints it.
func (r *Resolver) shown(p string, exists bool, id fileID) string {
	c := filepath.Clean(p)
	if c == p || !r.insideRoot(c) {
		// (A ".." that climbs out of the sysroot as a string: cleaned, it
		// would name a file of this machine's, which is never looked at.)
		return p
	}
	file, err := r.real(c)
	var st os.FileInfo
	if err == nil {
		st, err = r.files.stat(file)
	}
	switch {
	case err != nil && !exists:
		return c
	case err == nil && exists && st.Mode().IsRegular() && elfx.IDOf(st) == id && id != (fileID{}):
		return c
	}
	return p
}

// loadedAs is the loaded object that is the file id, or nil (also for the
// zero id of a file system without inodes).
func loadedAs(res *Result, id fileID) *Object {
	if id == (fileID{}) {
		return nil
	}
	for _, o := range res.Objects {
		if o.id == id {
			return o
		}
	}
	return nil
}

// apply records on dep what candidate s means for this closure: done when
// the dependency is bound to it (a loaded object that is the same file,
// or a new object); not ok when s lacks what that needs to know (it was
// not parsed).
func (r *Resolver) apply(res *Result, obj *Object, dep *Dep, s step) (done, ok bool) {
	var o *Object
	if s.exists {
		o = loadedAs(res, s.id)
	}
	return r.applyTo(res, obj, dep, s, o)
}

// applyTo is apply for a candidate that is the loaded object o (nil: none).
func (r *Resolver) applyTo(res *Result, obj *Object, dep *Dep, s step, o *Object) (done, ok bool) {
	if !s.exists {
		// Absent candidates under glibc-hwcaps are not worth listing.
		if s.hwcaps == "" || s.rule == RuleCache {
			dep.Tried = append(dep.Tried, Attempt{Path: s.show, Rule: s.rule, Result: "absent"})
		}
		return false, true
	}
	switch {
	case o != nil:
		o.names = append(o.names, dep.Name)
		dep.Path = o.Path
	case s.reject != "":
		a := Attempt{Path: s.show, Rule: s.rule, Result: s.reject, Stops: s.fatal}
		dep.Tried = append(dep.Tried, a)
		dep.Rejected = append(dep.Rejected, a)
		if s.fatal {
			dep.Rule = RuleMissing
			return true, true
		}
		return false, true
	case s.pf == nil:
		return false, false
	default:
		// $ORIGIN comes from the path opened, not from the one shown.
		o = r.newObject(s.pf, s.id, s.path, obj)
		o.Path, o.real = s.show, s.real
		o.names = append(o.names, dep.Name)
		if o.Soname != "" && o.Soname != dep.Name {
			o.names = append(o.names, o.Soname)
		}
		res.Objects = append(res.Objects, o)
		dep.Path = o.Path
	}
	dep.Tried = append(dep.Tried, Attempt{Path: s.show, Rule: s.rule, Result: "found"})
	dep.Object, dep.Rule, dep.Via, dep.HWCaps = o, s.rule, s.via, s.hwcaps
	dep.LegacyHWCaps = dep.LegacyHWCaps || s.legacy
	return true, true
}

// Incompatible returns why the loader would skip a candidate with header
// have when loading for want, or "" when it is acceptable.
func Incompatible(want, have elfx.Header) string {
	describe := func(h elfx.Header) string {
		s := h.ClassName() + " " + h.MachineName()
		if h.AMDGPU != nil {
			s += " " + h.AMDGPU.Processor
		}
		return s
	}
	switch {
	case have.Class != want.Class || have.Machine != want.Machine:
		return fmt.Sprintf("%s, need %s", describe(have), describe(want))
	case have.Data != want.Data:
		return fmt.Sprintf("%s data, need %s", have.DataName(), want.DataName())
	case osabiGroup(have.OSABI) != osabiGroup(want.OSABI):
		return fmt.Sprintf("OS ABI %s, need %s", have.OSABIName(), want.OSABIName())
	case have.Machine == elf.EM_AMDGPU && have.ABIVersion != want.ABIVersion:
		return fmt.Sprintf("code object ABI version %d, need %d", have.ABIVersion, want.ABIVersion)
	case have.Type != elf.ET_DYN && have.Type != elf.ET_EXEC:
		return fmt.Sprintf("%s, only ET_DYN and ET_EXEC can be loaded", have.TypeName())
	}
	return ""
}

// openVerify is glibc's open_verify for a candidate the search found
// and parsed, loading for the root want (see loaderVerdict). A root or
// candidate of another machine than a host's (AMDGPU code objects) keeps
// Incompatible's rules, all of which pass a candidate over.
func openVerify(want elfx.Header, pf *parsed) (skip, fatal string) {
	if want.Machine == elf.EM_AMDGPU || pf.hdr.Machine == elf.EM_AMDGPU {
		return Incompatible(want, pf.hdr), ""
	}
	if skip, fatal = loaderVerdict(want, pf.head[:]); skip != "" || fatal != "" {
		return skip, fatal
	}
	return "", mapVerdict(pf.noLoad, pf.hdr.Type, pf.static, pf.pie)
}

// mapVerdict is what glibc's _dl_map_object_from_fd refuses, past
// open_verify, in its order: an object without loadable segments, an
// executable (only the program itself is loaded as one), an object
// without a dynamic section, a position-independent executable; "" for
// none.
func mapVerdict(noLoad bool, typ elf.Type, noDynamic, pie bool) string {
	switch {
	case noLoad:
		return "object file has no loadable segments"
	case typ == elf.ET_EXEC:
		return "cannot dynamically load executable"
	case noDynamic:
		return "object file has no dynamic section"
	case pie:
		return "cannot dynamically load position-independent executable"
	}
	return ""
}

// unparsedVerdict is openVerify for a candidate that could not be parsed
// (err), from its first bytes: the loader fails on what it cannot load
// ("file too short", "invalid ELF header": a linker script or a text file
// where a library was expected stops the load) unless it passes the file
// over first (another class or machine).
func unparsedVerdict(want elfx.Header, path string, err error) (skip, fatal string) {
	if want.Machine == elf.EM_AMDGPU {
		if errors.Is(err, elfx.ErrNotELF) {
			return "not an ELF file", ""
		}
		return err.Error(), ""
	}
	p, perr := elfx.OpenProbe(path)
	if perr != nil {
		return perr.Error(), "" // gone or unreadable: as the loader's open failing
	}
	defer p.Close()
	if skip, fatal = loaderVerdict(want, p.Head); skip != "" || fatal != "" {
		return skip, fatal
	}
	// The program headers, when the head holds them (as it does in what
	// linkers write), say what the mapping would refuse.
	head := p.Head
	var bo binary.ByteOrder = binary.LittleEndian
	if elf.Data(head[elf.EI_DATA]) == elf.ELFDATA2MSB {
		bo = binary.BigEndian
	}
	phoff, phnum, entsz := bo.Uint64(head[32:]), uint64(bo.Uint16(head[56:])), uint64(56)
	if elf.Class(head[elf.EI_CLASS]) == elf.ELFCLASS32 {
		phoff, phnum, entsz = uint64(bo.Uint32(head[28:])), uint64(bo.Uint16(head[44:])), 32
	}
	if phoff <= uint64(len(head)) && phnum <= (uint64(len(head))-phoff)/entsz {
		noLoad, noDynamic := true, true
		for i := range phnum {
			switch elf.ProgType(bo.Uint32(head[phoff+i*entsz:])) {
			case elf.PT_LOAD:
				noLoad = false
			case elf.PT_DYNAMIC:
				noDynamic = false
			}
		}
		if fatal = mapVerdict(noLoad, elf.Type(bo.Uint16(head[16:])), noDynamic, false); fatal != "" {
			return "", fatal
		}
	}
	return "", "cannot load it: " + err.Error()
}

// libcABIMax is glibc's LIBC_ABI_MAX (libc-abis: UNIQUE, IFUNC and
// ABSOLUTE after the default): the EI_ABIVERSION values below it are
// valid for ELFOSABI_GNU objects, 0 for ELFOSABI_SYSV ones (glibc 2.36).
const libcABIMax = 4

// loaderVerdict is glibc's open_verify on a candidate's ELF header head
// (the file's first bytes), loading for the root want: skip says why the
// loader passes over it and searches on (another class or machine), fatal
// why it fails to load it and stops ("error while loading shared
// libraries: … ELF file OS ABI invalid"), in glibc's words; both "" when
// the header is one it loads. The checks run in glibc's order, so a
// foreign class is passed over whatever else is wrong.
func loaderVerdict(want elfx.Header, head []byte) (skip, fatal string) {
	size := 64
	if len(head) > elf.EI_CLASS && elf.Class(head[elf.EI_CLASS]) == elf.ELFCLASS32 {
		size = 52
	}
	if len(head) < size {
		return "", "file too short"
	}
	if string(head[:4]) != elf.ELFMAG {
		return "", "invalid ELF header"
	}
	class, data := elf.Class(head[elf.EI_CLASS]), elf.Data(head[elf.EI_DATA])
	var bo binary.ByteOrder = binary.LittleEndian
	if data == elf.ELFDATA2MSB {
		bo = binary.BigEndian
	}
	typ, machine := elf.Type(bo.Uint16(head[16:])), elf.Machine(bo.Uint16(head[18:]))
	passOver := func() string { // as Incompatible says it
		return fmt.Sprintf("%s %s, need %s %s", elfx.Header{Class: class}.ClassName(), elfx.MachineName(machine), want.ClassName(), want.MachineName())
	}
	if class != want.Class {
		return passOver(), ""
	}
	if data != want.Data {
		if want.Data == elf.ELFDATA2LSB {
			return "", "ELF file data encoding not little-endian"
		}
		return "", "ELF file data encoding not big-endian"
	}
	osabi, abiVersion := elf.OSABI(head[elf.EI_OSABI]), head[elf.EI_ABIVERSION]
	phentsize, wantPhentsize := bo.Uint16(head[54:]), uint16(56)
	if class == elf.ELFCLASS32 {
		phentsize, wantPhentsize = bo.Uint16(head[42:]), 32
	}
	switch {
	case head[elf.EI_VERSION] != byte(elf.EV_CURRENT):
		return "", "ELF file version ident does not match current one"
	case osabi != elf.ELFOSABI_NONE && osabi != elf.ELFOSABI_LINUX:
		return "", "ELF file OS ABI invalid"
	case abiVersion != 0 && (osabi != elf.ELFOSABI_LINUX || abiVersion >= libcABIMax):
		return "", "ELF file ABI version invalid"
	case [elf.EI_NIDENT - elf.EI_PAD]byte(head[elf.EI_PAD:elf.EI_NIDENT]) != [elf.EI_NIDENT - elf.EI_PAD]byte{}:
		return "", "nonzero padding in e_ident"
	case bo.Uint32(head[20:]) != uint32(elf.EV_CURRENT):
		return "", "ELF file version does not match current one"
	case machine != want.Machine:
		return passOver(), ""
	case typ != elf.ET_DYN && typ != elf.ET_EXEC:
		return "", "only ET_DYN and ET_EXEC can be loaded"
	case phentsize != wantPhentsize:
		return "", "ELF file's phentsize not the expected size"
	}
	return "", ""
}

// osabiGroup treats ELFOSABI_NONE and ELFOSABI_LINUX (GNU) as one, as glibc does.
func osabiGroup(o elf.OSABI) elf.OSABI {
	if o == elf.ELFOSABI_LINUX {
		return elf.ELFOSABI_NONE
	}
	return o
}

// expand substitutes $ORIGIN, ${ORIGIN}, $LIB, ${LIB}, $PLATFORM and
// ${PLATFORM} in s for object o.
func (r *Resolver) expand(s string, o *Object) string {
	if !strings.Contains(s, "$") {
		return s
	}
	return expandDST(s, o.origin, r.libToken(o.Header), r.platform(o.Header))
}

// expandDST substitutes the dynamic string tokens in s as glibc's
// _dl_dst_substitute does: $NAME or ${NAME} for ORIGIN, PLATFORM and LIB,
// where a bare $NAME must not run on into a letter, digit or underscore
// ($ORIGINAL is not $ORIGIN followed by AL); any other '$' stays as it is.
func expandDST(s, origin, lib, platform string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		s = s[i+1:]
		n := 0
		for _, t := range [...]struct{ name, value string }{{"ORIGIN", origin}, {"PLATFORM", platform}, {"LIB", lib}} {
			if n = dstLen(s, t.name); n > 0 {
				b.WriteString(t.value)
				break
			}
		}
		if n == 0 {
			b.WriteByte('$')
		}
		s = s[n:]
	}
}

// OriginRelative reports whether a run path entry starts with the $ORIGIN
// token (or ${ORIGIN}) as ld.so reads it: "$ORIGINAL/lib" does not, and
// names a directory relative to the working directory, as "$LIB/x" does.
func OriginRelative(entry string) bool {
	rest, ok := strings.CutPrefix(entry, "$")
	return ok && dstLen(rest, "ORIGIN") > 0
}

// dstLen is the length of the token name (bare or in braces) at the start
// of s, which follows a '$', or 0 when s does not start with it (glibc's
// is_dst).
func dstLen(s, name string) int {
	if rest, ok := strings.CutPrefix(s, "{"); ok {
		if strings.HasPrefix(rest, name) && strings.HasPrefix(rest[len(name):], "}") {
			return len(name) + 2
		}
		return 0
	}
	if !strings.HasPrefix(s, name) {
		return 0
	}
	if len(s) > len(name) {
		c := s[len(name)]
		if c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			return 0
		}
	}
	return len(name)
}

func (r *Resolver) platform(h elfx.Header) string {
	if r.opts.Platform != "" {
		return r.opts.Platform
	}
	switch h.Machine {
	case elf.EM_X86_64:
		return hostPlatform()
	case elf.EM_386:
		return "i686"
	case elf.EM_AARCH64:
		return "aarch64"
	case elf.EM_PPC64:
		if h.Data == elf.ELFDATA2LSB {
			return "ppc64le"
		}
		return "ppc64"
	}
	return strings.ToLower(strings.TrimPrefix(elfx.MachineName(h.Machine), "EM_"))
}

func (r *Resolver) libToken(h elfx.Header) string {
	if r.opts.Lib != "" {
		return r.opts.Lib
	}
	if t := triplet(h); t != "" {
		if st, err := r.files.stat(r.inRoot("/usr/lib/" + t)); err == nil && st.IsDir() {
			return "lib/" + t
		}
	}
	if h.Class == elf.ELFCLASS64 {
		return "lib64"
	}
	return "lib"
}

// triplet is the Debian multiarch triplet for the header's ABI.
func triplet(h elfx.Header) string {
	switch h.Machine {
	case elf.EM_X86_64:
		if h.Class == elf.ELFCLASS32 {
			return "x86_64-linux-gnux32"
		}
		return "x86_64-linux-gnu"
	case elf.EM_386:
		return "i386-linux-gnu"
	case elf.EM_AARCH64:
		return "aarch64-linux-gnu"
	case elf.EM_PPC64:
		if h.Data == elf.ELFDATA2LSB {
			return "powerpc64le-linux-gnu"
		}
		return "powerpc64-linux-gnu"
	case elf.EM_RISCV:
		return "riscv64-linux-gnu"
	}
	return ""
}

// cacheFlags is the ld.so.cache flag value ld.so accepts for the header
// (_DL_CACHE_DEFAULT_ID).
func cacheFlags(h elfx.Header) uint32 {
	switch {
	case h.Machine == elf.EM_X86_64 && h.Class == elf.ELFCLASS64:
		return 0x0303 // FLAG_X8664_LIB64 | FLAG_ELF_LIBC6
	case h.Machine == elf.EM_X86_64:
		return 0x0803 // FLAG_X8664_LIBX32
	case h.Machine == elf.EM_AARCH64:
		return 0x0a03
	case h.Machine == elf.EM_PPC64:
		return 0x0503
	case h.Machine == elf.EM_RISCV:
		return 0x1003
	}
	return flagELFLibc6
}

// loadCache is the ld.so.cache that res's loader reads: Options.CachePath,
// else the one its setup names, else <root>/etc/ld.so.cache.
func (r *Resolver) loadCache(res *Result) *Cache {
	if r.opts.NoCache {
		return nil
	}
	if c, ok := r.caches[res.setup]; ok {
		return c
	}
	std := r.inRoot("/etc/ld.so.cache")
	p := r.opts.CachePath
	switch {
	case p != "":
	case res.setup != nil && res.setup.Cache != "":
		p = r.inRoot(res.setup.Cache)
	default:
		p = std
	}
	type read struct {
		c   *Cache
		err error
	}
	got := r.files.remember(onceKey{"ld.so.cache", p}, func() any {
		c, err := ReadCache(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) && r.opts.Warn != nil {
			r.opts.Warn(fmt.Sprintf("%v; searched the directories of ld.so.conf instead", err))
		}
		return read{c, err}
	}).(read)
	c := got.c
	if got.err != nil {
		c = nil
		if p == std || p == r.opts.CachePath {
			r.cacheErr = got.err
			// Without a cache, ld.so.conf's directories stand in for it
			// (as ldconfig would have put them there). Not for a loader
			// with a cache of its own (Nix's glibc reads its store
			// path's, which does not exist): it has no ld.so.conf either.
			if dirs := ReadConf(r.inRoot("/etc/ld.so.conf"), r.opts.Root); len(dirs) > 0 {
				r.defaults = append(dirs, r.defaults...)
			}
		}
	}
	if r.caches == nil {
		r.caches = map[*loaderSetup]*Cache{}
	}
	r.caches[res.setup] = c
	return c
}

// CacheError is the error reading the cache, if any (after Resolve).
func (r *Resolver) CacheError() error { return r.cacheErr }

// setupOf reads the trusted directories and cache of loader o (nil: none),
// once per file.
func (r *Resolver) setupOf(o *Object) *loaderSetup {
	if o == nil {
		return nil
	}
	file := o.FilePath()
	inRoot := file
	if root := filepath.Clean(r.opts.Root); r.opts.Root != "" && root != "/" {
		inRoot = strings.TrimPrefix(file, root)
	}
	return r.files.remember(onceKey{"loader setup", file}, func() any {
		s, ok := readLoaderSetup(file, filepath.Dir(inRoot))
		if !ok {
			return (*loaderSetup)(nil)
		}
		return &loaderSetup{s, file}
	}).(*loaderSetup)
}

// trustedDirs are the directories ld.so searches last for res: its
// loader's (see LoaderSetup), unless Options.DefaultDirs overrides them or
// the loader's cannot be read, then the usual ones for the root's machine.
func (r *Resolver) trustedDirs(res *Result) []string {
	if r.opts.DefaultDirs != nil || res.setup == nil {
		return r.defaultDirs(res.Root.Header)
	}
	return append(r.defaults[:len(r.defaults):len(r.defaults)], res.setup.Dirs...)
}

func (r *Resolver) defaultDirs(h elfx.Header) []string {
	if r.opts.DefaultDirs != nil {
		return append(r.defaults[:len(r.defaults):len(r.defaults)], r.opts.DefaultDirs...)
	}
	var dirs []string
	if t := triplet(h); t != "" {
		if st, err := r.files.stat(r.inRoot("/usr/lib/" + t)); err == nil && st.IsDir() {
			dirs = append(dirs, "/lib/"+t, "/usr/lib/"+t)
		}
	}
	if h.Class == elf.ELFCLASS64 && len(dirs) == 0 {
		dirs = append(dirs, "/lib64", "/usr/lib64")
	}
	dirs = append(dirs, "/lib", "/usr/lib")
	return append(r.defaults[:len(r.defaults):len(r.defaults)], dirs...)
}

// LinkerDirs are the directories where the link editor and the loader
// look for the system's libraries for files of header h: ld.so.conf's
// (under Root), then the machine's default ones, each existing directory
// once by its real path.
func (r *Resolver) LinkerDirs(h elfx.Header) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range append(ReadConf(r.inRoot("/etc/ld.so.conf"), r.opts.Root), r.defaultDirs(h)...) {
		real, err := filepath.EvalSymlinks(r.inRoot(d))
		if err != nil || seen[real] {
			continue
		}
		if st, err := os.Stat(real); err != nil || !st.IsDir() {
			continue
		}
		seen[real] = true
		out = append(out, real)
	}
	return out
}

// ReadConf reads an ld.so.conf with its include globs (relative to root)
// and returns the listed directories in order, as ldconfig's parse_conf
// and add_dir_1 read them: '#' ends a line; "include" takes one or more
// glob patterns separated by blanks, relative ones relative to the file's
// directory; "hwcap" lines (any case) are ignored; a directory loses an
// old "=TYPE" suffix (libc4, libc5, libc6) and its trailing blanks and
// slashes, and one listed twice is kept where it first appears.
func ReadConf(file, root string) []string {
	var out []string
	seen := map[string]bool{}
	listed := map[string]bool{}
	var read func(string, int)
	read = func(p string, depth int) {
		if depth > 8 || seen[p] {
			return
		}
		seen[p] = true
		b, err := regfile.ReadFile(p)
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(b), "\n") {
			if i := strings.IndexByte(line, '#'); i >= 0 {
				line = line[:i]
			}
			line = strings.TrimLeft(line, " \t\r\v\f")
			blankAt := func(i int) bool { return len(line) > i && (line[i] == ' ' || line[i] == '\t') }
			switch {
			case line == "":
			case strings.HasPrefix(line, "include") && blankAt(7):
				for _, pat := range strings.FieldsFunc(line[8:], func(r rune) bool { return r == ' ' || r == '\t' }) {
					if !path.IsAbs(pat) {
						pat = filepath.Join(filepath.Dir(p), pat)
					} else if root != "" {
						pat = filepath.Join(root, pat)
					}
					matches, _ := filepath.Glob(pat)
					for _, m := range matches {
						read(m, depth+1)
					}
				}
			case len(line) > 5 && strings.EqualFold(line[:5], "hwcap") && blankAt(5):
			default:
				dir, _, _ := strings.Cut(line, "=")
				dir = strings.TrimRight(dir, " \t\r\v\f")
				dir = strings.TrimRight(dir, "/")
				if dir != "" && !listed[dir] {
					listed[dir] = true
					out = append(out, dir)
				}
			}
		}
	}
	read(file, 0)
	return out
}

// Why returns every chain of object paths from the root to an object whose
// SONAME or NEEDED name is soname (root first).
func Why(res *Result, soname string) [][]string {
	var out [][]string
	for _, o := range res.Objects {
		for _, d := range o.Deps {
			if d.Name != soname && (d.Object == nil || d.Object.Soname != soname) {
				continue
			}
			var chain []string
			for l := o; l != nil; l = l.Loader {
				chain = append([]string{l.Path}, chain...)
			}
			target := d.Path
			if target == "" {
				target = d.Name + " (not found)"
			}
			out = append(out, append(chain, target))
		}
	}
	return out
}
