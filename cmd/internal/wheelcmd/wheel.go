// Package wheelcmd implements `rocmdoctor wheel relink`.
package wheelcmd

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/wheel"
)

// NewCmdWheel builds `wheel` with its `relink` subcommand.
func NewCmdWheel(io *cli.IOStreams) *cobra.Command {
	cmd := &cobra.Command{Use: "wheel", Short: "Work on Python wheels with native ROCm libraries"}
	cmd.AddCommand(newCmdRelink(io))
	return cmd
}

type relinkOptions struct {
	json     bool
	opts     wheel.Options
	resolver cli.ResolverFlags
}

func newCmdRelink(io *cli.IOStreams) *cobra.Command {
	o := &relinkOptions{}
	cmd := &cobra.Command{
		Use:   "relink WHEEL|DIR|NAME.dist-info",
		Short: "Point a vendor wheel's native libraries at a locally built ROCm, safely",
		Long: `Plan, show, rewrite and prove the retargeting of a wheel (.whl), an unpacked
wheel directory, or an installed distribution (its .dist-info directory) at the
ROCm given by --rocm PREFIX (lib, lib64, llvm/lib) and --lib-dir DIR.

Every NEEDED entry of every ELF is classified: in-wheel, target, system,
soname-change (a different major of the same library), grafted (an auditwheel
copy such as onnxruntime_rocm.libs/libamdhip64-46b24d76.so.6.2.60200),
bundled (with --replace-bundled: a copy of a target library under its own
name, as PyTorch's ROCm wheels carry torch/lib/libamdhip64.so) or missing.
Grafted, bundled and mismatched entries are replaced by the target's SONAMEs,
and the RUNPATH becomes the $ORIGIN-relative in-wheel directories plus the
target directories. Without --replace-bundled an in-wheel copy of a target
library is kept, with a note that it shadows the target. SONAME-major
changes need --allow-soname-change and are reported with the symbols at risk
(an unversioned name such as libamdhip64.so is none). After the rewrite every
closure must resolve and bind against the target, or nothing is written
(--allow-unresolved). Extension modules (name.cpython-311-….so, name.abi3.so)
are bound as the interpreter that imports them loads them (--python, by
default python3 on PATH): only what it exports is left to it, and any other
undefined symbol refuses the relink. Without an interpreter, and for a
library left alone with --ignore that is missing here, they are notes.

The new wheel keeps unchanged entries byte for byte (no recompression, same
order and attributes), regenerates RECORD and drops RECORD.jws/RECORD.p7s.`,
		Example: `  rocmdoctor wheel relink --rocm /opt/rocm-6.2.2 --dry-run onnxruntime_rocm-1.18.0-cp310-cp310-linux_x86_64.whl
  rocmdoctor wheel relink --rocm $ROCM --allow-soname-change --drop-bundled -o dist/ onnxruntime_rocm-*.whl
  rocmdoctor wheel relink --rocm $ROCM --replace-bundled --drop-bundled -o dist/ torch-2.5.1+rocm6.2-cp311-cp311-linux_x86_64.whl
  rocmdoctor wheel relink --lib-dir /nix/store/…-rocm/lib --in-place venv/lib/python3.10/site-packages/onnxruntime_rocm-1.18.0.dist-info`,
		Args: cli.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ro, err := o.resolver.Options(cmd, io)
			if err != nil {
				return err
			}
			o.opts.Resolver = ro
			if !cmd.Flags().Changed("python") && ro.Root == "" {
				o.opts.Python = cli.DefaultPython(io, args[0])
			}
			if !o.opts.DryRun && !o.opts.InPlace && o.opts.Output == "" && strings.HasSuffix(args[0], ".whl") {
				return &cli.UsageError{Err: errors.New("give -o DIR for the new wheel, --in-place, or --dry-run")}
			}
			return run(cmd.Context(), io, args[0], o)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.opts.ROCm, "rocm", nil, "target ROCm `PREFIX` (its lib, lib64, llvm/lib); repeatable")
	f.StringArrayVar(&o.opts.LibDirs, "lib-dir", nil, "another target `DIR` (repeatable)")
	f.StringArrayVar(&o.opts.Keep, "keep-runpath", nil, "keep this RUNPATH `ENTRY` as it is (repeatable)")
	f.StringArrayVar(&o.opts.Ignore, "ignore", nil, "leave NEEDED entries matching `GLOB` alone (matched against the SONAME and its unversioned form)")
	f.BoolVar(&o.opts.ReplaceBundled, "replace-bundled", false, "replace in-wheel copies of target libraries under their own names (torch/lib/libamdhip64.so) by the target's")
	f.BoolVar(&o.opts.DropBundled, "drop-bundled", false, "remove grafted (and replaced bundled) copies nothing references any more")
	f.BoolVar(&o.opts.AllowSONAMEChange, "allow-soname-change", false, "allow replacing a library by another major version")
	f.BoolVar(&o.opts.AllowUnresolved, "allow-unresolved", false, "write even if closures do not resolve and bind completely")
	f.StringVar(&o.opts.Python, "python", "", "the Python interpreter that imports the extension modules (`PATH`; default python3 on PATH, or the python3.Y of the wheel's cp3Y tag; \"\" for none)")
	f.StringVarP(&o.opts.Output, "output", "o", "", "write the new wheel into `DIR`")
	f.BoolVar(&o.opts.InPlace, "in-place", false, "replace the input")
	f.BoolVar(&o.opts.DryRun, "dry-run", false, "print the plan and write nothing")
	f.BoolVar(&o.json, "json", false, "print the plan as JSON")
	f.StringVar(&o.resolver.Root, "root", "", "resolve system libraries inside this sysroot `DIR`")
	f.StringVar(&o.resolver.HWCaps, "hwcaps", "auto", "glibc-hwcaps level for resolution")
	f.StringVar(&o.resolver.LegacyHWCaps, "legacy-hwcaps", "auto", "legacy hwcaps subdirectories (glibc before 2.37) for resolution: auto or none")
	return cmd
}

func run(ctx context.Context, io *cli.IOStreams, input string, o *relinkOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	p, err := wheel.PlanRelink(ctx, input, o.opts)
	if err == nil && !o.opts.DryRun {
		if err := p.Apply(ctx); err != nil {
			return err
		}
	}
	if p != nil {
		p.Close()
		if o.json {
			if werr := cli.WriteJSON(io.Out, p); werr != nil {
				return werr
			}
		} else {
			render(io, p)
		}
	}
	if err != nil {
		if errors.Is(err, wheel.ErrRefused) {
			cli.Printf(io.ErrOut, "rocmdoctor: %v\n", err)
			return &cli.FindingsError{Count: len(p.Findings)}
		}
		return err
	}
	return nil
}

func render(io *cli.IOStreams, p *wheel.Plan) {
	c := io.Colors()
	w := io.Out
	cli.Printf(w, "%s (%s) → %s\n", p.Input, p.Kind, strings.Join(p.TargetDirs, ":"))
	var rows [][]string
	for _, f := range p.Files {
		for _, n := range f.Needed {
			to := n.Resolved
			if n.Replacement != "" {
				to = "→ " + n.Replacement
			}
			class := n.Class
			switch n.Class {
			case wheel.Missing, wheel.SONAMEChange:
				class = c.Yellow(class)
			case wheel.Grafted, wheel.Bundled:
				class = c.Bold(class)
			}
			rows = append(rows, []string{f.Path, n.Name, class, to})
		}
	}
	if len(rows) > 0 {
		io.Table([]string{"FILE", "NEEDED", "CLASS", "RESOLVES TO / REPLACED BY"}, rows)
	}
	for _, f := range p.Files {
		for _, n := range f.Needed {
			if n.Note != "" {
				cli.Printf(w, "%s: %s: %s\n", f.Path, n.Name, n.Note)
			}
		}
	}
	for _, f := range p.Files {
		switch {
		case f.Grafted || f.Bundled:
		case f.OldIsRPath && f.NewRunPath != f.OldRunPath:
			cli.Printf(w, "%s: RPATH %q → RUNPATH %q\n", f.Path, f.OldRunPath, f.NewRunPath)
		case f.NewRunPath != f.OldRunPath:
			cli.Printf(w, "%s: RUNPATH %q → %q\n", f.Path, f.OldRunPath, f.NewRunPath)
		}
		if len(f.ABIRisks) > 0 {
			cli.Printf(w, "%s: %s the replacement does not define: %s\n", f.Path, c.Yellow("ABI risk,"), strings.Join(f.ABIRisks, " "))
		}
	}
	for _, d := range p.Drop {
		cli.Printf(w, "drop %s (a copy of a target library, no longer referenced)\n", d)
	}
	for _, f := range p.Findings {
		cli.Printf(w, "%s %s: %s\n  fix: %s\n", c.Red(string(f.Severity)), f.Rule, f.Message, f.Fix)
	}
	for _, n := range p.Notes {
		cli.Printf(w, "note: %s\n", n)
	}
	if p.Written {
		cli.Printf(w, "wrote %s\n", p.Output)
	}
}
