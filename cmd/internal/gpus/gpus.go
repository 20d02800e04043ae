// Package gpus implements `rocmdoctor gpus`.
package gpus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/gpu"
)

// Options holds the flags of one gpus run.
type Options struct {
	IO      *cli.IOStreams
	Paths   []string
	Require []string
	JSON    bool
	Format  string
	FailOn  string
	Expect  string
}

// NewCmdGPUs builds the command; runF replaces Run in tests.
func NewCmdGPUs(io *cli.IOStreams, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: io}
	cmd := &cobra.Command{
		Use:   "gpus PATH...",
		Short: "Which GPUs can this build run on? A coverage matrix of device code",
		Long: `List the AMDGPU code objects every ELF file, archive member and standalone
code object under the paths carries (offload bundles in .hip_fatbin, raw
embedded images, .co/.hsaco files) as target IDs, and print a matrix of
libraries × GPU targets: ✓ exact, ~ compatible through the target-ID rules
(features left unset run in both modes, generic targets cover their family),
✗ none, ? unknown (device code in an offload bundle compressed with a method
rocmdoctor does not know; zlib and zstd bundles are read). Libraries without
device code are listed apart. A wheel (.whl) is read as the prefix it
installs: its members are listed as WHEEL!/MEMBER.

--require (repeatable, comma-separated; default from ROCMDOCTOR_GPU_TARGETS)
fails with exit 3 for each library with device code but none usable on a
required target (an unknown ? is not a failure; its note says why). rocBLAS/hipBLASLt Tensile kernel directories are checked per
required architecture (and a rocBLAS without them is flagged: GEMM returns
rocblas_status_excluded_from_build). --expect-from CMakeCache.txt compares
the built targets with GPU_TARGETS/AMDGPU_TARGETS (the INSTANCES_ONLY trap).`,
		Example: `  rocmdoctor gpus /opt/rocm/lib
  rocmdoctor gpus --require gfx1030,gfx90a:xnack+ /opt/rocm/lib
  rocmdoctor gpus --require gfx1100 torch-2.5.1+rocm6.2-cp311-cp311-linux_x86_64.whl
  rocmdoctor gpus --format markdown --expect-from build/CMakeCache.txt install/lib`,
		Args: cli.MinArgs(1, "PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if !cmd.Flags().Changed("require") {
				if v := os.Getenv("ROCMDOCTOR_GPU_TARGETS"); v != "" {
					opts.Require = []string{v}
				}
			}
			switch opts.Format {
			case "table", "markdown":
			default:
				return &cli.UsageError{Err: fmt.Errorf("--format must be table or markdown, not %q", opts.Format)}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&opts.Require, "require", nil, "required GPU target IDs, comma-separated (repeatable), e.g. gfx1030,gfx90a:xnack+")
	f.BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	f.StringVar(&opts.Format, "format", "table", "table or markdown")
	cli.FailOnVar(f, &opts.FailOn, cli.FailOnUsage)
	f.StringVar(&opts.Expect, "expect-from", "", "compare with the targets a build directory's CMakeCache.txt asked for")
	return cmd
}

// Run computes and renders the report.
func Run(ctx context.Context, opts *Options) error {
	if ctx == nil {
		ctx = context.Background()
	}
	rep, err := gpu.Check(ctx, opts.Paths, gpu.Options{Require: cli.CommaList(opts.Require), ExpectFrom: opts.Expect})
	if err != nil {
		if errors.Is(err, elfx.ErrBadTargetID) {
			return &cli.UsageError{Err: err}
		}
		return err
	}
	var errs []string
	for _, e := range rep.Errors {
		errs = append(errs, e.Error)
	}
	return cli.EmitReadErrors(opts.IO, opts.JSON, rep, func() error { return render(opts, rep) }, rep.Findings, opts.FailOn, errs)
}

// maxListed is how many files without device code the text output names
// in full.
const maxListed = 20

var marks = map[gpu.Coverage]string{gpu.CoverageExact: "✓", gpu.CoverageCompatible: "~", gpu.CoverageNone: "✗", gpu.CoverageUnknown: "?"}

func render(opts *Options, rep *gpu.Report) error {
	io := opts.IO
	w := io.Out
	header := append([]string{"LIBRARY"}, rep.Columns...)
	var rows [][]string
	for _, l := range rep.Libraries {
		row := []string{l.Path}
		for _, c := range rep.Columns {
			row = append(row, marks[l.Coverage[c]])
		}
		rows = append(rows, row)
	}
	if opts.Format == "markdown" {
		cli.Printf(w, "| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat("---|", len(header)))
		for _, r := range rows {
			cli.Printf(w, "| %s |\n", strings.Join(r, " | "))
		}
	} else if len(rows) > 0 {
		if err := io.Table(header, rows); err != nil {
			return err
		}
	}
	tensileKernels := false
	for _, t := range rep.Tensile {
		tensileKernels = tensileKernels || len(t.Archs) > 0
	}
	if len(rep.Libraries) == 0 && !tensileKernels {
		cli.Printf(w, "%s\n", "no device code found")
	}
	for _, l := range rep.Libraries {
		var parts []string
		for _, c := range l.Code {
			s := fmt.Sprintf("%s ×%d", c.TargetID, c.Count)
			if c.Kind != "" {
				s += " " + c.Kind
			} else {
				s += " " + c.Container
			}
			if c.CodeObjectVersion > 0 {
				s += fmt.Sprintf(" v%d", c.CodeObjectVersion)
			}
			parts = append(parts, s)
		}
		if len(parts) == 0 {
			parts = []string{"device code that could not be read"}
		}
		cli.Printf(w, "%s: %s\n", l.Path, strings.Join(parts, ", "))
		for _, n := range l.Notes {
			cli.Printf(w, "  note: %s\n", n)
		}
	}
	if n := len(rep.NoDeviceCode); n > 0 {
		// A walked library directory has hundreds of host-only files: a
		// few name the kind, the JSON lists them all.
		shown := rep.NoDeviceCode
		more := ""
		if n > maxListed {
			shown, more = shown[:maxListed/2], fmt.Sprintf(" … and %d more (--json lists them)", n-maxListed/2)
		}
		cli.Printf(w, "no device code (%d): %s%s\n", n, strings.Join(shown, " "), more)
	}
	for _, t := range rep.Tensile {
		var archs []string
		for a, files := range t.Archs {
			archs = append(archs, fmt.Sprintf("%s (%d files)", a, len(files)))
		}
		sort.Strings(archs)
		if t.Dir == "" {
			cli.Printf(w, "%s: no Tensile library directory\n", t.Library)
		} else {
			cli.Printf(w, "%s Tensile kernels in %s: %s\n", t.Library, t.Dir, strings.Join(archs, ", "))
		}
	}
	if len(rep.MIOpenKDB) > 0 {
		var archs []string
		for a, n := range rep.MIOpenKDB {
			archs = append(archs, fmt.Sprintf("%s (%d)", a, n))
		}
		sort.Strings(archs)
		cli.Printf(w, "MIOpen kernel databases: %s\n", strings.Join(archs, ", "))
	}
	c := io.Colors()
	for _, f := range rep.Findings {
		cli.Printf(w, "%s %s: %s\n  fix: %s\n", c.Red(string(f.Severity)), f.Rule, f.Message, f.Fix)
	}
	return nil
}
