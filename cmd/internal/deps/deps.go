// Package deps implements `rocmdoctor deps`.
package deps

import (
	"context"
	"debug/elf"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// Options holds the flags of one deps run.
type Options struct {
	IO     *cli.IOStreams
	Paths  []string
	JSON   bool
	Flat   bool
	Why    string
	Dlopen bool
	// Verbose (-v, -vv, -vvv) shows more of the tree: edges to libraries
	// already shown, then the candidates rejected and paths tried, then
	// the whole subtree at every appearance.
	Verbose int
	// MaxDepth limits the tree's depth (0: no limit).
	MaxDepth int
	// Paths shows each library's path instead of its NEEDED name (-p).
	ShowPaths bool
	FailOn    string
	Resolver  cli.ResolverFlags
	resolver  rpath.Options
}

// NewCmdDeps builds the command; runF replaces Run in tests.
func NewCmdDeps(io *cli.IOStreams, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: io}
	cmd := &cobra.Command{
		Use:   "deps FILE...",
		Short: "Resolve shared-library dependencies like ld.so, and explain each one",
		Long: `Resolve the dependency closure of each file the way glibc's ld.so does
(DT_RPATH chain, LD_LIBRARY_PATH, DT_RUNPATH, ld.so.cache with glibc-hwcaps,
trusted directories, DF_1_NODEFLIB, $ORIGIN/$LIB/$PLATFORM) without running
anything. Every library shows the rule that found it; a missing library shows
every path tried and every candidate rejected with the reason (wrong class,
machine, data encoding or OS ABI).

With --dlopen, the libraries each file loads with dlopen() — which no
NEEDED entry records — are looked up as dlopen() called from it would find
them: those it declares in ELF dlopen metadata (.note.dlopen) and, when it
calls dlopen(), the lib*.so names in its read-only data (how libamdhip64.so.5
loads libamd_comgr.so.2). They do not change the exit status.

Nothing is read from the environment unless --env is given.
Exit status 3 when a NEEDED library is missing (see --fail-on).`,
		Example: `  rocmdoctor deps /usr/lib/x86_64-linux-gnu/libamd_comgr.so.2
  rocmdoctor deps --flat --lib-dir /opt/rocm/lib libMIOpen.so
  rocmdoctor deps --why libLLVM-15.so.1 libamd_comgr.so.2
  rocmdoctor deps --dlopen /usr/lib/x86_64-linux-gnu/libamdhip64.so.5
  rocmdoctor deps --root /sysroot --hwcaps x86-64-v3 usr/bin/app`,
		Args: cli.MinArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			ro, err := opts.Resolver.Options(cmd, opts.IO)
			if err != nil {
				return err
			}
			opts.resolver = ro
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.JSON, "json", false, "print the closure as JSON")
	f.BoolVar(&opts.Flat, "flat", false, "print a flat list like ldd instead of a tree")
	f.StringVar(&opts.Why, "why", "", "print the chains of objects that pull in `SONAME`")
	f.CountVarP(&opts.Verbose, "verbose", "v", "the tree shows each library once; -v also the edges to libraries already shown, -vv the candidates rejected and the paths tried, -vvv every subtree at every appearance")
	f.IntVar(&opts.MaxDepth, "max-depth", 0, "show the tree to this depth (0: all of it)")
	f.BoolVarP(&opts.ShowPaths, "path", "p", false, "show each library's path instead of its NEEDED name")
	f.BoolVar(&opts.Dlopen, "dlopen", false, "also resolve what each file loads with dlopen(): its .note.dlopen declarations and the library names in its read-only data")
	cli.FailOnVar(f, &opts.FailOn, "exit 3 on missing libraries unless this is never (error, warning, note or never)")
	opts.Resolver.Register(f)
	return cmd
}

// Result is the JSON document of a deps run.
type Result struct {
	SchemaVersion int    `json:"schema_version"`
	Files         []File `json:"files"`
	// Warnings are what resolution worked around (a damaged
	// ld.so.cache), each once; also printed on stderr.
	Warnings []string `json:"warnings,omitempty"`
}

// File is one resolved input.
type File struct {
	Path    string            `json:"path"`
	Error   string            `json:"error,omitempty"`
	Flat    []rpath.FlatEntry `json:"flat,omitempty"`
	Objects []*rpath.Object   `json:"objects,omitempty"`
	Missing []*rpath.Dep      `json:"missing,omitempty"`
	// InterpreterProblem says why the kernel will not start the file with
	// its PT_INTERP (rpath.Result.InterpProblem).
	InterpreterProblem string `json:"interpreter_problem,omitempty"`
	// Dlopen (--dlopen) is what the file loads with dlopen() and where
	// dlopen() from it finds each.
	Dlopen []rpath.DlopenLoad `json:"dlopen,omitempty"`
}

// Run resolves every path and renders the result.
func Run(ctx context.Context, opts *Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	doc := Result{SchemaVersion: cli.SchemaVersion}
	ro := opts.resolver
	ro.KeepWarnings(&doc.Warnings)
	ro.Files = rpath.NewFileCache()
	r := rpath.New(ro) // for --dlopen, beside the workers of ResolveEach
	paths := make([]string, len(opts.Paths))
	for i, p := range opts.Paths {
		paths[i] = rpath.FileInRoot(opts.resolver.Root, p)
	}
	failed, missing := 0, 0
	err := rpath.ResolveEach(ctx, ro, paths, 0, func(i int, res *rpath.Result, err error) error {
		p := opts.Paths[i]
		if err != nil {
			failed++
			fmt.Fprintf(opts.IO.ErrOut, "rocmdoctor: %v\n", err)
			doc.Files = append(doc.Files, File{Path: p, Error: err.Error()})
			return nil
		}
		f := File{Path: p, Missing: res.Missing(), InterpreterProblem: res.InterpProblem}
		if opts.JSON {
			f.Flat, f.Objects = res.Flat(), res.Objects
		}
		missing += len(f.Missing)
		if f.InterpreterProblem != "" {
			missing++
		}
		if opts.Dlopen {
			var err error
			if f.Dlopen, err = r.DlopenLoads(res, true); err != nil {
				// A note that is not valid: the others are still shown.
				fmt.Fprintf(opts.IO.ErrOut, "rocmdoctor: %v\n", err)
			}
		}
		if opts.JSON {
			doc.Files = append(doc.Files, f)
			return nil
		}
		return render(opts, res, f.Dlopen) // and let the closure go
	})
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := cli.WriteJSON(opts.IO.Out, doc); err != nil {
			return err
		}
	}
	if failed > 0 {
		return cli.ErrSilent
	}
	if missing > 0 && opts.FailOn != "never" {
		return &cli.FindingsError{Count: missing}
	}
	return nil
}

func render(opts *Options, res *rpath.Result, dl []rpath.DlopenLoad) error {
	io := opts.IO
	c := io.Colors()
	w := io.Out
	switch {
	case opts.Why != "":
		chains := rpath.Why(res, opts.Why)
		if len(chains) == 0 {
			cli.Printf(w, "%s: nothing in the closure needs %s\n", res.Root.Path, opts.Why)
		}
		for _, ch := range chains {
			cli.Printf(w, "%s\n", strings.Join(ch, " → "))
		}
	case opts.Flat:
		if len(opts.Paths) > 1 {
			cli.Printf(w, "%s:\n", res.Root.Path) // (as ldd heads each file's list)
		}
		if s := nothingLoaded(res.Root); s != "" {
			cli.Printf(w, "\t%s\n", s)
		}
		for _, e := range res.Flat() {
			if e.Path == "" {
				cli.Printf(w, "\t%s => %s\n", e.Name, c.Red("not found"))
			} else {
				cli.Printf(w, "\t%s => %s (%s)\n", e.Name, e.Path, e.Rule)
			}
		}
		for _, l := range dl {
			if l.Missing() {
				cli.Printf(w, "\t%s => %s [dlopen]\n", strings.Join(l.Names, " | "), c.Red("not found"))
			} else {
				cli.Printf(w, "\t%s => %s (%s) [dlopen]\n", l.Dep.Name, l.Dep.Path, l.Dep.Rule)
			}
		}
	default:
		cli.Line(w, c.Bold(res.Root.Path))
		if s := nothingLoaded(res.Root); s != "" {
			cli.Line(w, "    ", c.Dim("("+s+")"))
		}
		t := tree{io: io, verbose: opts.Verbose, maxDepth: opts.MaxDepth, paths: opts.ShowPaths, seen: map[*rpath.Object]bool{res.Root: true}}
		t.print(res.Root, "", 1)
		printDlopen(io, res.Root, dl)
	}
	for _, d := range res.Missing() {
		explainMissing(io, d, "missing")
	}
	for _, l := range dl {
		if l.Missing() && opts.Why == "" {
			explainMissing(io, l.Dep, "missing (dlopen from "+res.Root.Path+")")
		}
	}
	if res.InterpProblem != "" {
		cli.Printf(io.ErrOut, "missing: program interpreter %s: %s; the kernel will not start %s with it\n", res.Root.Interpreter(), res.InterpProblem, res.Root.Path)
	}
	return nil
}

// nothingLoaded says why a file has no dependencies to show, where that
// is worth saying (ldd: "not a dynamic executable"); "" when it has some
// or is a library that needs nothing.
func nothingLoaded(o *rpath.Object) string {
	switch {
	case len(o.Needed) > 0:
		return ""
	case o.Header.Type == elf.ET_REL:
		return "an object file: the linker reads it, ld.so never loads it"
	case o.Static:
		return "statically linked: no dynamic section, nothing is loaded"
	case o.Header.Type == elf.ET_EXEC || o.PIE:
		return "no NEEDED entries: nothing is loaded; statically linked or static-pie"
	}
	return ""
}

// tree prints a closure as ld.so loads it, each library once unless
// verbose asks for more (as libtree does).
type tree struct {
	io       *cli.IOStreams
	verbose  int
	maxDepth int
	paths    bool
	seen     map[*rpath.Object]bool
}

func (t *tree) print(o *rpath.Object, indent string, depth int) {
	c := t.io.Colors()
	var deps []*rpath.Dep
	for _, d := range o.Deps {
		// An edge to a library already shown is left out by default.
		if !d.Missing() && (t.seen[d.Object] || d.Rule == rpath.RuleLoaded) && t.verbose == 0 {
			continue
		}
		deps = append(deps, d)
	}
	for i, d := range deps {
		branch, next := "├── ", "│   "
		if i == len(deps)-1 {
			branch, next = "└── ", "    "
		}
		name := d.Name
		if t.paths && d.Path != "" {
			name = d.Path
		}
		switch {
		case d.Missing():
			cli.Line(t.io.Out, indent, branch, d.Name, " ", c.Red("not found"))
		case (t.seen[d.Object] || d.Rule == rpath.RuleLoaded) && t.verbose < 3:
			cli.Line(t.io.Out, indent, branch, name, " ", c.Dim("["+string(d.Rule)+"] "+d.Path))
		default:
			t.seen[d.Object] = true
			rule := string(d.Rule)
			if d.Via != "" {
				rule += " of " + d.Via
			}
			if d.HWCaps != "" {
				if d.LegacyHWCaps {
					rule += ", legacy hwcaps " + d.HWCaps
				} else {
					rule += ", glibc-hwcaps " + d.HWCaps
				}
			}
			if t.paths {
				cli.Line(t.io.Out, indent, branch, name, " ", c.Dim("["+rule+"]"))
			} else {
				cli.Line(t.io.Out, indent, branch, d.Name, " => ", d.Path, " ", c.Dim("["+rule+"]"))
			}
			if t.verbose >= 2 {
				for _, r := range d.Rejected {
					cli.Line(t.io.Out, indent, next, c.Dim("rejected "+r.Path+": "+strings.TrimPrefix(r.Result, "skipped: ")))
				}
			}
			if t.maxDepth == 0 || depth < t.maxDepth {
				t.print(d.Object, indent+next, depth+1)
			}
		}
	}
}

// printDlopen lists what the root loads with dlopen(), as a second tree.
func printDlopen(io *cli.IOStreams, root *rpath.Object, dl []rpath.DlopenLoad) {
	if len(dl) == 0 {
		return
	}
	c := io.Colors()
	cli.Printf(io.Out, "%s\n", c.Bold("dlopen() from "+root.Path+":"))
	for i, l := range dl {
		branch := "├── "
		if i == len(dl)-1 {
			branch = "└── "
		}
		why := "named in its read-only data"
		if l.Source == "note" {
			why = "declared in its .note.dlopen, " + l.Priority
			if l.Feature != "" {
				why = fmt.Sprintf("declared in its .note.dlopen, feature %q, %s", l.Feature, l.Priority)
			}
		}
		if l.Missing() {
			cli.Printf(io.Out, "%s%s %s %s\n", branch, strings.Join(l.Names, " | "), c.Red("not found"), c.Dim("("+why+")"))
			continue
		}
		cli.Printf(io.Out, "%s%s => %s %s\n", branch, l.Dep.Name, l.Dep.Path, c.Dim("["+string(l.Dep.Rule)+"] ("+why+")"))
	}
}

// explainMissing prints, after what, the name and every path tried.
func explainMissing(io *cli.IOStreams, d *rpath.Dep, what string) {
	w := io.ErrOut
	cli.Printf(w, "%s: %s\n", what, d.Name)
	for _, a := range d.Tried {
		stops := ""
		if a.Stops {
			stops = " — ld.so fails here and searches no further"
		}
		cli.Printf(w, "  tried %s (%s): %s%s\n", a.Path, a.Rule, a.Result, stops)
	}
}
