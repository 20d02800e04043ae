// Package symbols implements `rocmdoctor symbols`.
package symbols

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

// Options holds the flags of one symbols run.
type Options struct {
	IO       *cli.IOStreams
	Paths    []string
	JSON     bool
	Demangle bool
	FailOn   string
	Symbols  symcheck.SymbolsOptions
	Resolver cli.ResolverFlags
}

// NewCmdSymbols builds the command; runF replaces Run in tests.
func NewCmdSymbols(io *cli.IOStreams, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: io}
	cmd := &cobra.Command{
		Use:   "symbols FILE...",
		Short: "Explain every undefined symbol, down to the archive that should have provided it",
		Long: `With one shared library or executable: bind every undefined dynamic symbol
against the dependency closure the way ld.so does (load order, symbol
versions, default and hidden versions, weak references) without running
anything, and report what stays unresolved: symbols defined nowhere, symbols
defined only with another version, and required version nodes a library
lacks (` + "`GLIBCXX_3.4.32' not found" + `). --closure checks every loaded object.

--host PROGRAM binds the file as PROGRAM loads it with dlopen(): plugins
(LLVMPolly.so in opt, a Python extension in python3, a profiler tool) take
symbols from the program without a NEEDED entry for them, so they are looked
up in the program's closure first, then in what the file brings along.

With archives, objects or several files: treat them as the inputs of one
link and report the names that objects reference and no input defines, with
the members that reference each (shared libraries given too only provide
definitions; a GNU ld script such as glibc's libc.so stands for the files
it names).

--index DIR (repeatable) searches a build tree or prefix for the archives and
libraries that define each unresolved name. LLVMInitialize* gaps are grouped
by target and component with the LLVM libraries to link.

Exit status 3 when unresolved symbols remain (see --fail-on).`,
		Example: `  rocmdoctor symbols libMIOpen.so
  rocmdoctor symbols --index /usr/lib/llvm-15/lib libMIOpen.so
  rocmdoctor symbols librockCompiler.a
  rocmdoctor symbols --filter 'LLVMInitialize*' --json libMIOpen.so
  rocmdoctor symbols --host /usr/lib/llvm-15/bin/opt /usr/lib/llvm-15/lib/LLVMPolly.so`,
		Args: cli.MinArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ro, err := opts.Resolver.Options(cmd, opts.IO)
			if err != nil {
				return err
			}
			opts.Paths = cli.InRoot(ro.Root, args)
			if opts.Symbols.Host != "" {
				if len(args) != 1 {
					return &cli.UsageError{Err: errors.New("--host takes one FILE, the shared object the program loads")}
				}
				opts.Symbols.Host = cli.InRoot(ro.Root, []string{opts.Symbols.Host})[0]
			}
			opts.Symbols.Resolver = ro
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	f.BoolVar(&opts.Demangle, "demangle", true, "show demangled C++/Rust names next to the raw ones")
	cli.FailOnVar(f, &opts.FailOn, cli.FailOnUsage)
	f.BoolVar(&opts.Symbols.Closure, "closure", false, "bind the undefined symbols of every object in the closure, like ldd -r")
	f.StringVar(&opts.Symbols.Host, "host", "", "bind FILE as the program `PROGRAM` loads it with dlopen (for plugins and extension modules)")
	f.StringArrayVar(&opts.Symbols.IndexDirs, "index", nil, "search `DIR` for archives and libraries defining unresolved names (repeatable)")
	f.StringVar(&opts.Symbols.Filter, "filter", "", "only symbols whose raw or demangled name matches `GLOB`")
	opts.Resolver.Register(f)
	return cmd
}

// Run computes and renders the report.
func Run(ctx context.Context, opts *Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	rep, err := symcheck.Symbols(ctx, opts.Paths, opts.Symbols)
	if err != nil {
		return err
	}
	return cli.Emit(opts.IO.Out, opts.JSON, rep, func() error { return render(opts, rep) }, rep.Findings, opts.FailOn)
}

func render(opts *Options, rep *symcheck.Report) error {
	io := opts.IO
	c := io.Colors()
	w := io.Out
	switch rep.Mode {
	case "dynamic":
		cli.Printf(w, "%s: %d object(s) loaded, %d reference(s) bound, %d finding(s)\n", strings.Join(rep.Inputs, " "), rep.Objects, rep.Satisfied, len(rep.Findings))
	default:
		cli.Printf(w, "%s: %d object(s), %d referenced name(s) defined inside the inputs, %d unresolved\n", strings.Join(rep.Inputs, " "), rep.Objects, rep.Satisfied, len(rep.Findings))
	}
	if len(rep.Findings) > 0 {
		header := []string{"RULE", "SYMBOL"}
		if opts.Demangle {
			header = append(header, "DEMANGLED")
		}
		header = append(header, "VERSION", "REFERENCED BY")
		provided := rep.IndexedFiles > 0
		for _, f := range rep.Findings {
			provided = provided || len(f.Providers) > 0
		}
		if provided {
			header = append(header, "DEFINED IN")
		}
		var rows [][]string
		for _, f := range rep.Findings {
			sym := f.Symbol
			if sym == "" {
				sym = f.Library
			}
			row := []string{c.Red(f.Rule), sym}
			if opts.Demangle {
				row = append(row, f.Demangled)
			}
			by := f.File
			if len(f.ReferencedBy) > 0 {
				by = strings.Join(f.ReferencedBy, " ")
			}
			row = append(row, f.Version, by)
			if provided {
				var ps []string
				for _, p := range f.Providers {
					s := p.String()
					if p.InClosure {
						s += " (in closure)"
					}
					if p.Note != "" {
						s += " (" + p.Note + ")"
					}
					ps = append(ps, s)
				}
				row = append(row, strings.Join(ps, " "))
			}
			rows = append(rows, row)
		}
		if err := io.Table(header, rows); err != nil {
			return err
		}
		for _, f := range rep.Findings {
			switch f.Rule {
			case finding.RuleMissingVersion, finding.RuleVersionMismatch, finding.RuleMissingLibrary, finding.RuleMissingInterpreter:
				cli.Printf(w, "%s %s\n  fix: %s\n", c.Yellow("•"), f.Message, f.Fix)
			}
		}
	}
	if l := rep.LLVM; l != nil {
		cli.Printf(w, "\n%s\n", c.Bold("LLVM initialisers"))
		for _, t := range l.Missing {
			fmt.Fprintf(w, "  LLVM target %s is referenced but not linked: missing %s\n    link %s\n",
				t.Target, strings.Join(t.Missing, ", "), strings.Join(t.Libraries, ", "))
			if len(t.FoundIn) > 0 {
				cli.Printf(w, "    found in %s\n", strings.Join(t.FoundIn, ", "))
			}
		}
		if len(l.Linked) > 0 {
			cli.Printf(w, "  linked targets: %s — a fat library whose dependency list was generated on a different LLVM configuration\n", strings.Join(l.Linked, ", "))
		}
		cli.Printf(w, "  fix: %s\n", l.Fix)
	}
	return nil
}
