// Package check implements `rocmdoctor check`, the post-build CI gate.
package checkcmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/rocmdoctor/rocmdoctor/check"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// progressEvery is the least time between two redraws of the progress
// line.
const progressEvery = 100 * time.Millisecond

// Options holds the flags of one check run.
type Options struct {
	IO            *cli.IOStreams
	Quiet         bool // no progress line
	Paths         []string
	JSON          bool
	Format        string
	FailOn        string
	Config        string
	Baseline      string
	WriteBaseline string
	ListRules     bool
	Workers       int
	Glibc         string
	Glibcxx       string
	ExpectRunpath bool
	DlopenStrings bool
	AllowEmpty    bool
	For           []string // programs the files are used by (--for)
	Python        string   // the interpreter of the Python extensions (--python)
	GPUTargets    []string
	Version       string
	Resolver      cli.ResolverFlags
	check         check.Options
}

// NewCmdCheck builds the command; runF replaces Run in tests.
func NewCmdCheck(io *cli.IOStreams, version string, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: io, Version: version}
	cmd := &cobra.Command{
		Use:   "check [PATH...]",
		Short: "One post-build gate over a whole prefix, with SARIF, JUnit and JSON output",
		Long: `Scan files and directories (ELF files, static archives, wheels) with every
check rocmdoctor has: missing libraries, unresolved symbols and versions,
LLVMInitialize* gaps, unwinder problems, and hygiene rules (RPATH/RUNPATH
into build directories, file-name and relative entries, missing SONAME,
executable stack, TEXTREL, GLIBC/GLIBCXX newer than a baseline). With
--gpu-targets, the device code too: files with none for a required GPU, and
rocBLAS/hipBLASLt Tensile kernels missing for one (as rocmdoctor gpus
--require). Every finding has a rule ID (rocmdoctor check --list-rules;
docs/rules.md).

PATH defaults to $ROCM_PATH, else /opt/rocm. Settings come from
.rocmdoctor.toml (or .yaml), found upward from the first PATH, or --config: severity
overrides, ignores per rule, path, symbol and SONAME, the baselines and a
baseline file of accepted findings (--baseline, --write-baseline).

Output: a table on a terminal, plain text otherwise, --json (docs/check-json.md),
--format sarif (SARIF 2.1.0 for GitHub code scanning) or junit. Exit status 3
when findings at or above --fail-on remain; Ctrl-C stops with a partial report.`,
		Example: `  rocmdoctor check /opt/rocm
  rocmdoctor check --format sarif --glibc 2.28 $out > rocmdoctor.sarif
  rocmdoctor check --write-baseline baseline.json build/install
  rocmdoctor check --list-rules`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			ro, err := opts.Resolver.Options(cmd, opts.IO)
			if err != nil {
				return err
			}
			opts.check.Resolver = ro
			if !cmd.Flags().Changed("python") && ro.Root == "" {
				// (Silently none when it is a shim: the RD1006 notes say
				// the interpreter is not known. Under --root, nothing
				// outside the root is read.)
				opts.Python = cli.DefaultPython(nil, "")
			}
			if opts.JSON {
				opts.Format = "json"
			}
			switch opts.Format {
			case "", "table", "plain", "json", "sarif", "junit":
			default:
				return &cli.UsageError{Err: fmt.Errorf("--format must be table, plain, json, sarif or junit, not %q", opts.Format)}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.JSON, "json", false, "print the report as JSON (same as --format json)")
	f.StringVar(&opts.Format, "format", "", "table, plain, json, sarif or junit (default: table on a terminal, plain otherwise)")
	cli.FailOnVar(f, &opts.FailOn, cli.FailOnUsage)
	f.StringVar(&opts.Config, "config", "", "read settings from `FILE` (TOML or YAML) instead of the nearest .rocmdoctor.toml")
	f.StringVar(&opts.Baseline, "baseline", "", "ignore findings recorded in `FILE`")
	f.StringVar(&opts.WriteBaseline, "write-baseline", "", "record the current findings in `FILE` (and exit 0)")
	f.BoolVar(&opts.ListRules, "list-rules", false, "list the rules and exit")
	f.IntVar(&opts.Workers, "workers", 0, "files checked in parallel (default: two per CPU)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "draw no progress line on the terminal")
	f.StringVar(&opts.Glibc, "glibc", "", "fail on files needing a GLIBC_ version newer than `VERSION` (e.g. 2.28)")
	f.StringVar(&opts.Glibcxx, "glibcxx", "", "fail on files needing a GLIBCXX_ version newer than `VERSION` (e.g. 3.4.25)")
	f.BoolVar(&opts.ExpectRunpath, "expect-runpath", false, "report DT_RPATH where DT_RUNPATH is expected (RD1204)")
	f.BoolVar(&opts.DlopenStrings, "dlopen-strings", false, "look up the library names in the read-only data of files that call dlopen(), as dlopen() from them would (RD1010; reads those files' sections)")
	f.StringArrayVar(&opts.GPUTargets, "gpu-targets", nil, "GPU target IDs the build must run on, comma-separated (repeatable), e.g. gfx90a,gfx1100: enables RD1401/RD1402")
	f.StringVar(&opts.Python, "python", "", "the Python interpreter that imports the extension modules (`PATH`; default python3 on PATH, past a version manager's shim the system's; \"\" for none): only what it exports is left to them")
	f.StringArrayVar(&opts.For, "for", nil, "a `PROGRAM` the checked files are used by, outside the scan (repeatable): what it loads and exports decides how their gaps count (RD1006, RD1012)")
	f.BoolVar(&opts.AllowEmpty, "allow-empty", false, "accept a directory with nothing to check in it (by default an error: the gate would pass an empty install)")
	opts.Resolver.Register(f)
	return cmd
}

// Run scans and renders.
func Run(ctx context.Context, opts *Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.ListRules {
		return listRules(opts)
	}
	root := opts.check.Resolver.Root
	if len(opts.Paths) == 0 {
		p := os.Getenv("ROCM_PATH")
		if p == "" {
			p = "/opt/rocm"
		}
		if _, err := os.Stat(rpath.FileInRoot(root, p)); err != nil {
			return &cli.UsageError{Err: fmt.Errorf("no PATH given, and neither $ROCM_PATH nor /opt/rocm exists%s: name the prefix or files to check", inRootNote(root))}
		}
		opts.Paths = []string{p}
	}
	opts.Paths = cli.InRoot(root, opts.Paths)
	co := &opts.check
	co.Glibc, co.Glibcxx, co.ExpectRunpath, co.Workers = opts.Glibc, opts.Glibcxx, opts.ExpectRunpath, opts.Workers
	co.DlopenStrings = opts.DlopenStrings
	co.AllowEmpty = opts.AllowEmpty
	co.Programs = cli.InRoot(root, opts.For)
	co.Python = opts.Python
	co.GPUTargets = cli.CommaList(opts.GPUTargets)
	cfg := opts.Config
	if cfg == "" {
		cfg = check.FindConfig(opts.Paths[0])
	}
	baseline := opts.Baseline
	if cfg != "" {
		b, err := check.LoadConfig(cfg, co)
		if err != nil {
			return err
		}
		if baseline == "" && opts.WriteBaseline == "" {
			baseline = b
		}
	}
	if baseline != "" {
		m, err := check.ReadBaseline(baseline)
		if err != nil {
			return err
		}
		co.Baseline = m
	}
	if opts.IO.IsStderrTerminal() && !opts.Quiet {
		// At most ten redraws a second: a line per file was megabytes
		// written to the terminal over /usr/lib.
		var next time.Time
		co.Progress = func(done, total int, path string) {
			if done == total {
				opts.IO.Progress("", "")
				return
			}
			if now := time.Now(); now.Before(next) {
				return
			} else {
				next = now.Add(progressEvery)
			}
			if n := utf8.RuneCountInString(path); n > 60 {
				path = "…" + string([]rune(path)[n-59:])
			}
			opts.IO.Progress(fmt.Sprintf("[%d/%d %d%%] ", done, total, done*100/max(total, 1)), path)
		}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := check.Run(ctx, opts.Paths, *co)
	if errors.Is(err, elfx.ErrBadTargetID) {
		return &cli.UsageError{Err: err}
	}
	if err != nil {
		return err
	}
	if rep.Interrupted {
		cli.Printf(opts.IO.ErrOut, "%s\n", "rocmdoctor: interrupted; the report covers the files checked so far")
	}
	for _, e := range rep.Errors {
		cli.Printf(opts.IO.ErrOut, "rocmdoctor: %s\n", e.Error)
	}
	if opts.WriteBaseline != "" {
		if err := check.WriteBaseline(opts.WriteBaseline, rep); err != nil {
			return err
		}
		cli.Printf(opts.IO.ErrOut, "wrote %d finding(s) to %s\n", len(rep.Findings), opts.WriteBaseline)
		return nil
	}
	if err := render(opts, rep); err != nil {
		return err
	}
	if n := rep.Count(opts.FailOn); n > 0 && opts.FailOn != "never" {
		return &cli.FindingsError{Count: n}
	}
	if len(rep.Errors) > 0 || rep.Interrupted {
		return cli.ErrSilent
	}
	return nil
}

func listRules(opts *Options) error {
	if opts.JSON || opts.Format == "json" {
		return cli.WriteJSON(opts.IO.Out, map[string]any{"schema_version": cli.SchemaVersion, "rules": finding.Rules})
	}
	var rows [][]string
	for _, r := range finding.Rules {
		rows = append(rows, []string{r.ID, r.Name, string(r.Severity), r.Description})
	}
	return opts.IO.Table([]string{"ID", "NAME", "SEVERITY", "DESCRIPTION"}, rows)
}

// maxNotesPerFile is how many notes of one rule on one file the text
// output shows one by one; more are one row.
const maxNotesPerFile = 3

func render(opts *Options, rep *check.Report) error {
	io := opts.IO
	switch opts.Format {
	case "json":
		return cli.WriteJSON(io.Out, rep)
	case "sarif":
		return check.WriteSARIF(io.Out, rep, opts.Version)
	case "junit":
		return check.WriteJUnit(io.Out, rep, opts.FailOn)
	case "plain":
		io.SetTerminal(false)
	case "table":
		io.ForceTables()
	}
	c := io.Colors()
	if len(rep.Findings) > 0 {
		var rows [][]string
		fs := rep.Findings
		for i := 0; i < len(fs); i++ {
			f := fs[i]
			sev := string(f.Severity)
			switch f.Severity {
			case finding.SeverityError:
				sev = c.Red(sev)
			case finding.SeverityWarning:
				sev = c.Yellow(sev)
			}
			msg := f.Message
			// Notes of one rule on one file (a plugin's hundreds of
			// undefined symbols: LLVMPolly.so has 581) are one row here,
			// so the errors are not lost among them; JSON, SARIF and
			// JUnit keep each.
			if f.Severity == finding.SeverityNote {
				j := i + 1
				for j < len(fs) && fs[j].Severity == f.Severity && fs[j].ID == f.ID && fs[j].File == f.File {
					j++
				}
				if j-i > maxNotesPerFile {
					msg += fmt.Sprintf(" (and %d more %s notes on this file; --format json lists them)", j-i-1, f.ID)
					i = j - 1
				}
			}
			rows = append(rows, []string{f.ID, sev, f.RelPath, msg, f.Fix})
		}
		if err := io.Table([]string{"ID", "SEVERITY", "FILE", "MESSAGE", "FIX"}, rows); err != nil {
			return err
		}
	}
	var parts []string
	for _, s := range []finding.Severity{finding.SeverityError, finding.SeverityWarning, finding.SeverityNote} {
		n := 0
		for _, f := range rep.Findings {
			if f.Severity == s {
				n++
			}
		}
		parts = append(parts, fmt.Sprintf("%d %s(s)", n, s))
	}
	extra := ""
	if rep.Ignored+rep.Baselined > 0 {
		extra = fmt.Sprintf(" (%d ignored by configuration, %d in the baseline)", rep.Ignored, rep.Baselined)
	}
	if n := len(rep.Errors); n > 0 {
		extra += fmt.Sprintf("; %d path(s) could not be checked", n)
	}
	_, err := fmt.Fprintf(io.Out, "checked %d file(s): %s%s\n", len(rep.Files), strings.Join(parts, ", "), extra)
	return err
}

func inRootNote(root string) string {
	if root == "" {
		return ""
	}
	return " in " + root
}
