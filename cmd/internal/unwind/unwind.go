// Package unwind implements `rocmdoctor unwind`.
package unwind

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/rpath"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

// Options holds the flags of one unwind run.
type Options struct {
	IO   *cli.IOStreams
	Args []string
	Link bool
	// Transcript is a file holding `clang -### …` output ("-" for stdin).
	Transcript string
	JSON       bool
	FailOn     string
	Resolver   cli.ResolverFlags
	resolver   rpath.Options
}

// NewCmdUnwind builds the command; runF replaces Run in tests.
func NewCmdUnwind(io *cli.IOStreams, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: io}
	cmd := &cobra.Command{
		Use:   "unwind FILE... | unwind --link -- ARGS... | unwind --link-transcript FILE",
		Short: "Catch ABI-mismatched libunwind on a link line and mixed unwinders in a process",
		Long: `With --link, read a compiler-driver or linker command line (after --) the
way lld and GNU ld do: objects, archives, -L, -l, -l:name, -Wl, forwarding,
-Bstatic/-Bdynamic, --sysroot, -target, -m32. Every -l is resolved like lld
(directory order, .so before .a unless static) and every input is compared
with the objects being linked (class, data encoding, machine, OS ABI). An
x86-64 libunwind.so on the link line of an amdgcn object is named with the
fix, together with the candidate GNU ld would have skipped to. For an amdgcn
target, clang's driver is modelled as its AMDGPU toolchain builds the ld.lld
job: up to clang 17 a -L given to the driver does not reach ld.lld (the
version is read from the program name, clang-15 or .../llvm-15/bin/clang).

With --link-transcript, read what ` + "`clang -### …`" + ` printed (FILE, or - for
stdin) and check its linker job exactly as the linker gets it.

With files, resolve each closure and identify every unwinder in it by what
it exports (LLVM libunwind, nongnu libunwind, libgcc_s, static copies), then
report two providers of _Unwind_RaiseException/_Unwind_Resume in one process,
a NEEDED libunwind.so.1/.so.8 resolving to the other flavour, unwinder
candidates of the wrong machine, and libraries exporting _Unwind_* they should
only import.

Exit status 3 on findings (see --fail-on).`,
		Example: `  rocmdoctor unwind --link -- clang++ -x assembler -target amdgcn-amdhsa -mcpu=gfx803 test.s -o test -L/opt/llvm/lib -lunwind
  rocmdoctor unwind --link -- ld.lld k.o -L/usr/lib/llvm-15/lib -lunwind
  clang -### -target amdgcn-amd-amdhsa -mcpu=gfx906 k.o -lunwind 2>&1 | rocmdoctor unwind --link-transcript -
  rocmdoctor unwind /opt/rocm/lib/libMIOpen.so`,
		Args: func(cmd *cobra.Command, args []string) error {
			t, _ := cmd.Flags().GetString("link-transcript")
			switch {
			case t != "" && (len(args) > 0 || opts.Link):
				return &cli.UsageError{Err: fmt.Errorf("--link-transcript reads the link from its file: give no --link and no FILE arguments")}
			case t == "" && len(args) == 0:
				return &cli.UsageError{Err: fmt.Errorf("unwind needs FILE arguments, --link -- followed by a link command line, or --link-transcript FILE")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ro, err := opts.Resolver.Options(cmd, opts.IO)
			if err != nil {
				return err
			}
			opts.Args = args
			if !opts.Link { // a link line's paths are the linker's, not the loader's
				opts.Args = cli.InRoot(ro.Root, args)
			}
			opts.resolver = ro
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.Link, "link", false, "check the link command line given after --")
	f.StringVar(&opts.Transcript, "link-transcript", "", "check the linker job of `clang -### …` output in `FILE` (- for stdin)")
	f.BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	cli.FailOnVar(f, &opts.FailOn, cli.FailOnUsage)
	opts.Resolver.Register(f)
	return cmd
}

// Result is the JSON document of an unwind run.
type Result struct {
	SchemaVersion int                      `json:"schema_version"`
	Mode          string                   `json:"mode"` // "link" or "closure"
	Link          *symcheck.LinkLine       `json:"link,omitempty"`
	Files         []*symcheck.UnwindResult `json:"files,omitempty"`
	Findings      []finding.Finding        `json:"findings"`
	// Warnings are what resolution worked around (a damaged
	// ld.so.cache), each once; also printed on stderr.
	Warnings []string `json:"warnings,omitempty"`
}

// Run checks and renders.
func Run(ctx context.Context, opts *Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	res := Result{SchemaVersion: cli.SchemaVersion, Findings: []finding.Finding{}}
	var errs []string // files that could not be checked
	if opts.Link || opts.Transcript != "" {
		res.Mode = "link"
		var ll *symcheck.LinkLine
		var err error
		if opts.Transcript != "" {
			ll, err = readTranscript(opts.IO, opts.Transcript)
			if err != nil {
				return err
			}
		} else if ll, err = symcheck.ParseLinkLine(opts.Args); err != nil {
			return &cli.UsageError{Err: fmt.Errorf("link line: %w", err)}
		}
		res.Link = ll
		res.Findings = append(res.Findings, symcheck.LinkFindings(ll)...)
	} else {
		res.Mode = "closure"
		ro := opts.resolver
		ro.KeepWarnings(&res.Warnings)
		files, err := symcheck.CheckUnwindFiles(ctx, opts.Args, ro)
		if err != nil {
			return err
		}
		res.Files = files
		for _, f := range files {
			res.Findings = append(res.Findings, f.Findings...)
			if f.Error != "" {
				errs = append(errs, f.Error)
			}
		}
	}
	return cli.EmitReadErrors(opts.IO, opts.JSON, res, func() error { return render(opts.IO, &res) }, res.Findings, opts.FailOn, errs)
}

func render(io *cli.IOStreams, res *Result) error {
	c := io.Colors()
	w := io.Out
	if res.Link != nil {
		cli.Printf(w, "link for %s (from %s)\n", res.Link.TargetText, res.Link.Target.From)
		if res.Link.Driver != "" {
			cli.Printf(w, "linker arguments: %s\n", res.Link.Driver)
		}
		var rows [][]string
		for _, in := range res.Link.Inputs {
			ok := c.Green("ok")
			switch {
			case in.Kind == "missing": // not found, not wrong
				ok = c.Red("MISSING")
			case !in.Compatible:
				ok = c.Red("INCOMPATIBLE")
			}
			rows = append(rows, []string{in.Arg, in.Kind, in.Path, in.Identity, ok})
		}
		if err := io.Table([]string{"INPUT", "KIND", "PATH", "IDENTITY", "STATUS"}, rows); err != nil {
			return err
		}
	}
	for _, f := range res.Files {
		if f.Error != "" {
			continue // on stderr
		}
		cli.Printf(w, "%s\n", c.Bold(f.File))
		if len(f.Unwinders) == 0 {
			cli.Printf(w, "%s\n", "  no unwinder in the closure")
			continue
		}
		var rows [][]string
		for _, u := range f.Unwinders {
			fl := u.Flavour
			if u.Static {
				fl += " (static copy)"
			}
			rows = append(rows, []string{u.Path, fl, u.Machine, strings.Join(u.PulledInBy, " "), strings.Join(u.BoundBy, " ")})
		}
		if err := io.Table([]string{"UNWINDER", "FLAVOUR", "MACHINE", "LOADED FOR", "USED BY"}, rows); err != nil {
			return err
		}
	}
	for _, f := range res.Findings {
		sev := c.Red(string(f.Severity))
		if f.Severity != finding.SeverityError {
			sev = c.Yellow(string(f.Severity))
		}
		cli.Printf(w, "%s %s: %s\n  fix: %s\n", sev, f.Rule, f.Message, f.Fix)
	}
	return nil
}

// readTranscript parses a `clang -###` transcript from a file or stdin.
func readTranscript(io *cli.IOStreams, name string) (*symcheck.LinkLine, error) {
	if name == "-" {
		return symcheck.ParseLinkTranscript(io.In, "standard input")
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return symcheck.ParseLinkTranscript(f, name)
}
