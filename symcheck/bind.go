package symcheck

import (
	"cmp"
	"context"
	"debug/elf"
	"fmt"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// Table is what binding needs from one object's .dynsym: hashed lookups,
// its undefined references and its version tables.
type Table struct {
	tab     *elfx.SymbolTable
	verdefs map[string]bool
	needs   []elfx.VersionNeed
	cost    int // bytes counted against the TableCache budget
	// kept is what the cache's keep function said of the file the
	// table was read from (TableCache.Add), nil for none.
	kept any

	// The references to the unwinding ABI, found on first use (a check
	// asks once per closure that contains the object).
	unwindOnce sync.Once
	unwindRefs []elfx.Symbol
	// What it provides of the unwinding ABI (unwinderOf), found on first
	// use: every closure that contains libgcc_s asks.
	flavourOnce sync.Once
	flavour     string
	intercepts  bool
}

// unwinder is unwinderOf(t), computed once.
func (t *Table) unwinder() (flavour string, intercepts bool) {
	t.flavourOnce.Do(func() { t.flavour, t.intercepts = unwinderOf(t) })
	return t.flavour, t.intercepts
}

func (t *Table) unwindReferences() []elfx.Symbol {
	t.unwindOnce.Do(func() { t.unwindRefs = t.tab.UndefinedNamed(unwindABI...) })
	return t.unwindRefs
}

// Binder binds undefined dynamic symbols against resolved closures. It
// caches each object's symbol table by path, so checking many files that
// share libc, libstdc++ or libLLVM reads those once.
type Binder struct {
	resolver *rpath.Resolver
	tables   *TableCache
}

// TableCache holds symbol tables by path; it is safe for concurrent use,
// so parallel Binders (one per worker, each with its own resolver) read
// every library once. What it holds is bounded whatever the number of
// files: tables count their copied bytes (a mapped one counts as
// mappedTableCost, which also bounds the number of mappings) against a
// budget, and past it some entries are dropped; a dropped table is read
// again if it is needed again.
type TableCache struct {
	mu      sync.Mutex
	m       map[tableKey]*Table
	bytes   int
	budget  int
	keep    func(*elfx.File) any // TableCacheOptions.Keep
	observe func(*elfx.File)     // TableCacheOptions.Observe
}

// tableKey names a file by device and inode, so a library reached through
// several paths (/lib and /usr/lib on a merged-/usr system, a scanned
// path and the SONAME link the loader follows) is read once; by path only
// where there is no inode.
type tableKey struct {
	id   elfx.FileID
	path string
}

func keyOf(id elfx.FileID, path string) tableKey {
	if id != (elfx.FileID{}) {
		return tableKey{id: id}
	}
	return tableKey{path: path}
}

func fileKey(f *elfx.File) tableKey {
	var id elfx.FileID
	if st := f.FileInfo(); st != nil {
		id = elfx.IDOf(st)
	}
	return keyOf(id, f.Path)
}

func objectKey(o *rpath.Object) tableKey { return keyOf(o.ID(), o.Path) }

// tableCacheBudget is the default TableCache budget.
const tableCacheBudget = 256 << 20

const mappedTableCost = 64 << 10

// NewTableCache returns an empty cache.
func NewTableCache() *TableCache { return NewTableCacheWith(TableCacheOptions{}) }

// TableCacheOptions configure NewTableCacheWith; the zero value is
// NewTableCache's.
type TableCacheOptions struct {
	// Budget is how many bytes of tables the cache holds (0: 256 MiB).
	Budget int
	// Keep, when not nil, is called by Add with each file Add reads a
	// table from, and what it returns is kept with the table
	// (Table.Kept): a scan that hands Add every file the resolver parses
	// (rpath.FileCache.OnParse) reads what else it needs of a library
	// while the file is open, once.
	Keep func(f *elfx.File) any
	// Observe, when not nil, is called with every file a table is read
	// from, by the cache or a Binder using it (tests count reads).
	Observe func(f *elfx.File)
}

// NewTableCacheWith returns an empty cache configured by o.
func NewTableCacheWith(o TableCacheOptions) *TableCache {
	return &TableCache{m: map[tableKey]*Table{}, budget: cmp.Or(o.Budget, tableCacheBudget), keep: o.Keep, observe: o.Observe}
}

// Lookup returns the table cached for the file with identity id (zero
// when unknown) at path.
func (c *TableCache) Lookup(id elfx.FileID, path string) (*Table, bool) {
	return c.get(keyOf(id, path))
}

// LookupFile is Lookup for an open file.
func (c *TableCache) LookupFile(f *elfx.File) (*Table, bool) { return c.get(fileKey(f)) }

func (c *TableCache) get(k tableKey) (*Table, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.m[k]
	return t, ok
}

// Add reads f's table unless the cache has it (and what the cache's keep
// function says of f). Check hands it to the resolvers' FileCache
// (OnParse), so every library resolved is read while the resolver has it
// open.
func (c *TableCache) Add(f *elfx.File) {
	k := fileKey(f)
	if _, ok := c.get(k); !ok {
		if t, err := c.Read(f); err == nil {
			if c.keep != nil {
				t.kept = c.keep(f)
			}
			c.put(k, t)
		}
	}
}

func (c *TableCache) put(k tableKey, t *Table) {
	cost := t.tab.HeapBytes()
	if cost == 0 {
		cost = mappedTableCost
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t.cost = cost
	if old, ok := c.m[k]; ok {
		c.bytes -= old.cost
	}
	c.m[k] = t
	c.bytes += cost
	if c.bytes <= c.budget {
		return
	}
	// Drop entries (in map order, which is as good as any here) until a
	// quarter of the budget is free, so this does not run on every put.
	for p, o := range c.m {
		if c.bytes <= c.budget*3/4 {
			break
		}
		if p != k {
			delete(c.m, p)
			c.bytes -= o.cost
		}
	}
}

// NewBinder returns a Binder resolving libraries with r.
func NewBinder(r *rpath.Resolver) *Binder {
	return &Binder{resolver: r, tables: NewTableCache()}
}

// NewBinderWithCache returns a Binder sharing cache with others.
func NewBinderWithCache(r *rpath.Resolver, cache *TableCache) *Binder {
	return &Binder{resolver: r, tables: cache}
}

// Prime hands f, which the caller has open, to the resolver and the table
// cache, so binding it does not open it again. Errors are left for
// binding to report.
func (b *Binder) Prime(f *elfx.File) {
	if b.resolver.Prime(f) != nil {
		return
	}
	b.tables.Add(f)
}

// Resolver is the resolver b binds with.
func (b *Binder) Resolver() *rpath.Resolver { return b.resolver }

// Tables is b's table cache.
func (b *Binder) Tables() *TableCache { return b.tables }

func (b *Binder) table(o *rpath.Object) (*Table, error) {
	k := objectKey(o)
	if t, ok := b.tables.get(k); ok {
		return t, nil
	}
	t, err := b.tables.ReadPath(o.FilePath())
	if err != nil {
		return nil, err
	}
	b.tables.put(k, t)
	return t, nil
}

// ReadPath reads the symbol table of the ELF file at path; the cache
// does not keep it.
func (c *TableCache) ReadPath(path string) (*Table, error) {
	f, err := elfx.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return c.Read(f)
}

// Read reads f's symbol table; the cache does not keep it (Add does).
func (c *TableCache) Read(f *elfx.File) (*Table, error) {
	if c.observe != nil {
		c.observe(f)
	}
	return tableOf(f)
}

// tableOf reads f's tables; they stay valid after f is closed.
func tableOf(f *elfx.File) (*Table, error) {
	var err error
	t := &Table{verdefs: map[string]bool{}}
	// Mapped: binding visits a few pages of each library's tables, and
	// the tables outlive the open file in the cache.
	if t.tab, err = f.DynamicSymbolTable(); err != nil {
		return nil, err
	}
	for _, d := range t.tab.VersionDefs() {
		t.verdefs[d.Name] = true
	}
	t.needs = t.tab.VersionNeeds()
	return t, nil
}

// loadTables reads the symbol tables of objs that are not cached yet, two
// at a time (the machine's cores; the work is reading and decoding).
func (b *Binder) loadTables(objs []*rpath.Object) ([]*Table, error) {
	tabs := make([]*Table, len(objs))
	var todo []int
	for i, o := range objs {
		if t, ok := b.tables.get(objectKey(o)); ok {
			tabs[i] = t
		} else {
			todo = append(todo, i)
		}
	}
	type result struct {
		i   int
		t   *Table
		err error
	}
	ch := make(chan result, len(todo))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, i := range todo {
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem }()
			t, err := b.tables.ReadPath(objs[i].FilePath())
			ch <- result{i, t, err}
		}(i)
	}
	var first error
	for range todo {
		r := <-ch
		if r.err != nil {
			if first == nil {
				first = finding.PathErr(objs[r.i].Path, r.err) // once: most errors name the file
			}
			continue
		}
		tabs[r.i] = r.t
		b.tables.put(objectKey(objs[r.i]), r.t)
	}
	if first != nil {
		return nil, first
	}
	return tabs, nil
}

// Closure resolves the closure of root as the loader does and loads the
// symbol tables of its objects, in load order (res.Objects').
func (b *Binder) Closure(ctx context.Context, root string) (res *rpath.Result, tabs []*Table, err error) {
	if res, err = b.resolver.Resolve(ctx, root); err != nil {
		return nil, nil, err
	}
	if tabs, err = b.loadTables(res.Objects); err != nil {
		return nil, nil, err
	}
	return res, tabs, nil
}

// Kept is what the cache's keep function returned for the file the table
// was read from (NewTableCacheKeeping); nil when none.
func (t *Table) Kept() any { return t.kept }

// VersionNeeds are the object's version requirements (.gnu.version_r).
func (t *Table) VersionNeeds() []elfx.VersionNeed { return t.needs }

// Symbols is the object's dynamic symbol table.
func (t *Table) Symbols() *elfx.SymbolTable { return t.tab }

// Defines reports whether the object exports a definition of name.
func (t *Table) Defines(name string) bool { return len(t.definitions(name)) > 0 }

// Unwinder is which unwinder the object is (FlavourLibgcc, ...), "" when
// it is none.
func (t *Table) Unwinder() string { return classifyUnwinder(t) }

// UnwindReferences are the object's references to the unwinding ABI
// (_Unwind_RaiseException, _Unwind_Resume).
func (t *Table) UnwindReferences() []elfx.Symbol { return t.unwindReferences() }

// definitions returns the exportable definitions of name.
func (t *Table) definitions(name string) []elfx.Symbol {
	k := elfx.NewKey(name)
	return t.definitionsKey(nil, &k)
}

// definitionsKey appends the exportable definitions of k to dst.
func (t *Table) definitionsKey(dst []elfx.Symbol, k *elfx.Key) []elfx.Symbol {
	n := len(dst)
	all := t.tab.LookupKey(dst, k)
	out := all[:n]
	for _, s := range all[n:] {
		if elfx.Exportable(s) {
			out = append(out, s)
		}
	}
	return out
}

// DynamicResult is the outcome of binding one file's closure.
type DynamicResult struct {
	Closure  *rpath.Result
	Findings []finding.Finding
	// Checked counts the undefined references examined; Bound those that
	// bound to a definition (weak references that stay unresolved are
	// neither bound nor findings).
	Checked, Bound int
	scope          []*Table
}

// Defined reports whether some object of the closure exports name.
func (r *DynamicResult) Defined(name string) bool {
	for _, t := range r.scope {
		if t.tab.Searched() && len(t.definitions(name)) > 0 {
			return true
		}
	}
	return false
}

// BindDynamic resolves path and binds the undefined dynamic symbols of the
// file (of every object in its closure when closure is set).
func (b *Binder) BindDynamic(ctx context.Context, path string, closure bool) (*DynamicResult, error) {
	res, err := b.resolver.Resolve(ctx, path)
	if err != nil {
		return nil, err
	}
	return b.bind(ctx, res, 0, closure)
}

// BindLoaded binds the file at path (not what it loads) as it is loaded:
// in the program host when host is not "" (a Python extension in its
// interpreter: BindInHost), else in its own closure (BindDynamic).
func (b *Binder) BindLoaded(ctx context.Context, host, path string) (*DynamicResult, error) {
	if host != "" {
		return b.BindInHost(ctx, host, path, false)
	}
	return b.BindDynamic(ctx, path, false)
}

// BindInHost binds the file at path as the program at host loads it with
// dlopen(): its symbols are looked up in the program's closure first and
// then in what the file brings along (rpath.Resolver.ResolveIn). A plugin
// such as LLVMPolly.so, a Python extension or a rocprofiler tool takes
// symbols from the program without a NEEDED entry for them; this is how
// to check it against the program it is meant for. closure also binds the
// objects loaded after the file: what it brings along (or, when the
// program already has the file, what the program loads after it).
func (b *Binder) BindInHost(ctx context.Context, host, path string, closure bool) (*DynamicResult, error) {
	hres, err := b.resolver.Resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	res, module, err := b.resolver.ResolveIn(ctx, hres, path)
	if err != nil {
		return nil, err
	}
	return b.bind(ctx, res, module, closure)
}

// bind binds the undefined symbols of res.Objects[start] (and, with
// closure, of every object after it) against all of res.Objects in load
// order.
func (b *Binder) bind(ctx context.Context, res *rpath.Result, start int, closure bool) (*DynamicResult, error) {
	bd, err := b.newBinding(res)
	if err != nil {
		return nil, err
	}
	for i := start; i < len(bd.scope); i++ {
		if i > start && !closure {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := bd.object(i); err != nil {
			return nil, err
		}
	}
	for _, l := range bd.scope {
		if err := l.tab.tab.Err(); err != nil {
			return nil, err // a library changed under its mapping: the binding is unreliable
		}
	}
	return bd.out, nil
}

// binding is one bind: the closure's objects and tables in load order,
// where each reference is looked for first, and buffers reused from one
// reference to the next.
type binding struct {
	b     *Binder
	res   *rpath.Result
	out   *DynamicResult
	scope []loaded
	// Where a reference is looked for. Whether it binds does not depend
	// on the order of the search (the first match in scope order wins at
	// run time, but any match means it binds), so a versioned reference
	// is looked for first in the object it names (vna_file: hint, by
	// file name, to a scope index), and the others in the scope's objects
	// most recently bound to first (order: most references are to libc
	// or libstdc++, which come last in the scope, behind the file and its
	// other libraries), the file's own table last (its hash table holds
	// what it defines: it satisfies its own reference only with another
	// version of the name). A reference that binds nowhere has then been
	// looked for in every object once; the definitions it did not accept
	// are reported from the objects that had some (hadDefs).
	hint    map[string]int
	order   []int
	hadDefs []int
	scratch []elfx.Symbol
	// For the object being bound: the indices of its missing-library
	// findings in out.Findings, and hintByVer[v], 1 + the scope index of
	// the library its version index v names (0: none loaded).
	missing   []int
	hintByVer []int
}

type loaded struct {
	obj *rpath.Object
	tab *Table
}

func (b *Binder) newBinding(res *rpath.Result) (*binding, error) {
	tabs, err := b.loadTables(res.Objects)
	if err != nil {
		return nil, err
	}
	bd := &binding{b: b, res: res, out: &DynamicResult{Closure: res}, hint: map[string]int{}}
	index := make(map[*rpath.Object]int, len(res.Objects))
	for i, o := range res.Objects {
		bd.scope = append(bd.scope, loaded{o, tabs[i]})
		bd.out.scope = append(bd.out.scope, tabs[i])
		index[o] = i
	}
	for _, o := range res.Objects {
		for _, d := range o.Deps {
			if i, ok := index[d.Object]; ok && d.Object != nil {
				if _, dup := bd.hint[d.Name]; !dup {
					bd.hint[d.Name] = i
				}
			}
		}
	}
	bd.order = make([]int, 0, len(bd.scope))
	return bd, nil
}

// object binds the undefined symbols of scope[i]: its interpreter, its
// missing libraries, its version requirements, then each reference.
func (bd *binding) object(i int) error {
	l, out := bd.scope[i], bd.out
	if l.obj == bd.res.Root && bd.res.InterpProblem != "" {
		out.Findings = append(out.Findings, missingInterpreter(l.obj, bd.res.InterpProblem, bd.b.resolver.UsableDefaultInterp(l.obj.Header)))
	}
	// The missing-library findings of this object, by index: the
	// symbols it expects from such a library are folded into them.
	bd.missing = bd.missing[:0]
	for _, d := range l.obj.Deps {
		if d.Missing() {
			bd.missing = append(bd.missing, len(out.Findings))
			out.Findings = append(out.Findings, missingLibrary(l.obj.Path, d))
		}
	}
	if err := bd.versions(l); err != nil {
		return err
	}
	bd.order = bd.order[:0]
	for j := range bd.scope {
		if j != i {
			bd.order = append(bd.order, j)
		}
	}
	bd.order = append(bd.order, i)
	l.tab.tab.EachUndefinedTransient(func(u elfx.Symbol) bool {
		bd.reference(l, u)
		return true
	})
	for k, i := range bd.missing {
		var others []string
		if k == 0 {
			for _, j := range bd.missing[1:] {
				others = append(others, out.Findings[j].Library)
			}
		}
		foldUnresolved(&out.Findings[i], others)
	}
	return nil
}

// versions checks the version nodes l requires (dl-version.c): every
// non-weak requirement must be defined by the loaded object it names. It
// fills hintByVer, the first place a reference of each version is looked
// for.
func (bd *binding) versions(l loaded) error {
	hintByVer := bd.hintByVer[:0]
	defer func() { bd.hintByVer = hintByVer }()
	for _, vn := range l.tab.needs {
		h, hinted := bd.hint[vn.File]
		for _, v := range vn.Versions {
			if v.Index > 0x7fff {
				continue // no symbol can refer to it
			}
			for len(hintByVer) <= int(v.Index) {
				hintByVer = append(hintByVer, 0)
			}
			hintByVer[v.Index] = 0
			if hinted {
				hintByVer[v.Index] = h + 1
			}
		}
		dep := bd.byName(vn.File)
		if dep == nil {
			continue // reported as a missing library
		}
		dt, err := bd.b.table(dep)
		if err != nil {
			return err
		}
		for _, v := range vn.Versions {
			if v.Weak || dt.verdefs[v.Name] {
				continue
			}
			bd.out.Findings = append(bd.out.Findings, finding.Finding{
				Rule: finding.RuleMissingVersion, Severity: finding.SeverityError, File: l.obj.Path, Version: v.Name, Library: vn.File,
				Message: fmt.Sprintf("version `%s' not found (required by %s): %s defines %s", v.Name, l.obj.Path, dep.Path, versionList(dt.verdefs)),
				Fix:     fmt.Sprintf("run against a %s that provides %s (a newer build), or rebuild %s against the older one", vn.File, v.Name, l.obj.Path),
			})
		}
	}
	return nil
}

// byName is the loaded object a NEEDED entry name resolved to.
func (bd *binding) byName(name string) *rpath.Object {
	for _, d := range bd.res.Objects {
		for _, dep := range d.Deps {
			if dep.Name == name && dep.Object != nil {
				return dep.Object
			}
		}
	}
	if bd.res.Root.Soname == name {
		return bd.res.Root
	}
	return nil
}

// reference binds one undefined reference u of l, and reports it when it
// binds nowhere.
func (bd *binding) reference(l loaded, u elfx.Symbol) {
	if u.Bind == elf.STB_LOCAL {
		return
	}
	bd.out.Checked++
	k := elfx.NewKey(u.Name)
	bd.hadDefs = bd.hadDefs[:0]
	try := func(j int) bool {
		ok, defined := bd.scope[j].tab.tab.Binds(&k, u.Version)
		if !ok && defined {
			bd.hadDefs = append(bd.hadDefs, j)
		}
		return ok
	}
	first := -1
	if v := int(u.VersionIndex); u.Library != "" && v < len(bd.hintByVer) {
		first = bd.hintByVer[v] - 1
	}
	bound := first >= 0 && try(first)
	order := bd.order
	for p := 0; p < len(order) && !bound; p++ {
		if j := order[p]; j != first && try(j) {
			bound = true
			copy(order[1:p+1], order[:p]) // most recently bound first
			order[0] = j
		}
	}
	switch {
	case bound:
		bd.out.Bound++
	case u.Weak():
		// weak undefined references are allowed to stay unresolved
	default:
		bd.unbound(l, u, &k)
	}
}

// unbound reports reference u of l, which binds nowhere: under the
// missing library it expects it from, or as a finding of its own that
// says which definitions it did not accept.
func (bd *binding) unbound(l loaded, u elfx.Symbol, k *elfx.Key) {
	out := bd.out
	u.Name = strings.Clone(u.Name) // kept in the finding
	var others []string
	sort.Ints(bd.hadDefs) // reported in scope order
	for _, j := range bd.hadDefs {
		s := bd.scope[j]
		bd.scratch = s.tab.definitionsKey(bd.scratch[:0], k)
		for _, d := range bd.scratch {
			v := d.Version
			if v == "" {
				v = "(unversioned)"
			}
			others = append(others, v+" in "+s.obj.Path)
		}
	}
	if len(others) == 0 && u.Library != "" {
		for _, i := range bd.missing {
			if out.Findings[i].Library == u.Library {
				out.Findings[i].Unresolved = append(out.Findings[i].Unresolved, u.VersionedName())
				return
			}
		}
	}
	if len(others) == 0 && u.Library == "" && len(bd.missing) > 0 && !ownDiagnosis(u.Name) {
		// An unversioned name nothing loaded defines, in a file with a
		// missing library: ld.so stops at that library and never looks
		// the name up, so it is listed under the first missing library
		// (with one missing, the only candidate) instead of being a
		// finding of its own.
		i := bd.missing[0]
		out.Findings[i].Unresolved = append(out.Findings[i].Unresolved, u.Name)
		return
	}
	f := finding.Finding{Rule: finding.RuleUndefinedSymbol, Severity: finding.SeverityError, File: l.obj.Path, Symbol: u.Name,
		Demangled: finding.Demangle(u.Name), Version: u.Version, Library: u.Library}
	switch {
	case len(others) > 0 && u.Version == "":
		// An unversioned reference and only non-default later versions:
		// ld.so says "undefined symbol".
		f.DefinedWith = others
		f.Message = fmt.Sprintf("undefined symbol: %s (%s): defined only as %s, non-default versions an unversioned reference does not bind to",
			u.Name, l.obj.Path, strings.Join(others, ", "))
		f.Fix = fmt.Sprintf("rebuild %s against the library it runs with (the link records the version it needs), or provide a build that exports %s unversioned or as its default version", l.obj.Path, u.Name)
	case len(others) > 0:
		f.Rule = finding.RuleVersionMismatch
		f.DefinedWith = others
		f.Message = fmt.Sprintf("symbol %s version %s not defined in file %s with link time reference (%s); defined as %s",
			u.Name, u.Version, u.Library, l.obj.Path, strings.Join(others, ", "))
		f.Fix = fmt.Sprintf("provide the %s that %s was linked against (it defines %s@%s)", u.Library, l.obj.Path, u.Name, u.Version)
	default:
		f.Message = fmt.Sprintf("undefined symbol: %s (%s)", u.VersionedName(), l.obj.Path)
		if u.Library != "" {
			f.Message += ", expected from " + u.Library
		}
		f.Fix = "link the library that defines it (see --index), or add it to NEEDED"
		// Defined where ld.so does not look (no hash table).
		for _, s := range bd.scope {
			if !s.tab.tab.Searched() && len(s.tab.definitionsKey(bd.scratch[:0], k)) > 0 {
				f.Message += fmt.Sprintf("; %s defines it, but ld.so looks up no symbol there: its dynamic section has no hash table with buckets (DT_GNU_HASH or DT_HASH)", s.obj.Path)
				f.Fix = fmt.Sprintf("relink %s (linkers always write a hash table: a tool removed or emptied it)", s.obj.Path)
				break
			}
		}
	}
	out.Findings = append(out.Findings, f)
}

// missingInterpreter is the finding for a program whose PT_INTERP the
// kernel will not start it with (rpath.Result.InterpProblem); loader is
// the machine's usual loader where it is usable here, else "".
func missingInterpreter(o *rpath.Object, problem, loader string) finding.Finding {
	interp := o.Interpreter()
	msg := fmt.Sprintf("program interpreter %s: %s; the kernel refuses to start %s", interp, problem, o.Path)
	if problem == "not found" {
		// What the shell then says names the program, not the loader.
		msg += ` (the shell says "cannot execute: required file not found" or "no such file or directory" about the program itself)`
	}
	fix := fmt.Sprintf("point it at the system's loader: rocmdoctor patchelf --set-interpreter %s %s", loader, o.Path)
	if loader == "" {
		// No usable loader at the usual path (NixOS has none there).
		fix = fmt.Sprintf("point it at the dynamic loader of the C library it is to run with: rocmdoctor patchelf --set-interpreter LOADER %s (on NixOS, the file $NIX_CC/nix-support/dynamic-linker names it)", o.Path)
		if d := rpath.DefaultInterp(o.Header); d == interp {
			fix += ", or install a loader at " + d
		}
	}
	return finding.Finding{Rule: finding.RuleMissingInterpreter, Severity: finding.SeverityError, File: o.Path, Library: interp, Message: msg, Fix: fix}
}

func missingLibrary(file string, d *rpath.Dep) finding.Finding {
	msg := fmt.Sprintf("%s => not found (needed by %s)", d.Name, file)
	var rej []string
	var stop *rpath.Attempt
	for i, a := range d.Rejected {
		if a.Stops {
			stop = &d.Rejected[i]
			continue
		}
		rej = append(rej, a.Path+": "+strings.TrimPrefix(a.Result, "skipped: "))
	}
	if stop != nil {
		// glibc's open_verify: an error, not a candidate passed over.
		msg = fmt.Sprintf("%s => %s: %s (needed by %s): ld.so fails on it and searches no further", d.Name, stop.Path, stop.Result, file)
	}
	if len(rej) > 0 {
		msg += "; rejected " + strings.Join(rej, "; ")
	}
	fix := "install " + d.Name + " or add its directory with --lib-dir / the RUNPATH"
	switch {
	case stop != nil:
		fix = fmt.Sprintf("replace or remove %s: the loader stops at it, so a %s later in the search is never reached", stop.Path, d.Name)
	case strings.Contains(d.Name, "/"):
		// Opened as it is, never searched for (RD1211).
		fix = "the NEEDED entry is a path, which ld.so opens as it is (a relative one against the working directory) instead of searching for it: give the library a SONAME and relink, or `rocmdoctor patchelf --replace-needed " + d.Name + " " + path.Base(d.Name) + "`"
	}
	return finding.Finding{Rule: finding.RuleMissingLibrary, Severity: finding.SeverityError, File: file, Library: d.Name, Message: msg, Fix: fix}
}

// ownDiagnosis reports whether an unresolved name has a cause of its own
// that a missing library does not explain: LLVM's target initialisers
// (the LLVM diagnosis names the archives) and the Python C API (the
// interpreter that imports a module defines it).
func ownDiagnosis(name string) bool {
	return strings.HasPrefix(name, "LLVMInitialize") || strings.HasPrefix(name, "Py") || strings.HasPrefix(name, "_Py")
}

// foldUnresolved sorts the symbols folded into a missing-library finding
// and names them in its message; alsoMissing are the file's other missing
// libraries, which may define its unversioned names instead.
func foldUnresolved(f *finding.Finding, alsoMissing []string) {
	n := len(f.Unresolved)
	if n == 0 {
		return
	}
	sort.Strings(f.Unresolved)
	shown := f.Unresolved[:min(n, 3)]
	from := "it"
	if len(alsoMissing) > 0 {
		from = "it or " + strings.Join(alsoMissing, ", ")
	}
	if n == 1 {
		f.Message += fmt.Sprintf("; 1 undefined symbol expected from %s: %s", from, shown[0])
		return
	}
	f.Message += fmt.Sprintf("; %d undefined symbols expected from %s: %s", n, from, strings.Join(shown, ", "))
	if n > len(shown) {
		f.Message += fmt.Sprintf(" and %d more (--json lists them)", n-len(shown))
	}
}

func versionList(m map[string]bool) string {
	if len(m) == 0 {
		return "no versions"
	}
	var xs []string
	for k := range m {
		xs = append(xs, k)
	}
	sort.Strings(xs)
	if len(xs) > 8 {
		return strings.Join(xs[len(xs)-8:], " ") + fmt.Sprintf(" (and %d more)", len(xs)-8)
	}
	return strings.Join(xs, " ")
}
