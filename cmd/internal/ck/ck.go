// Package ck implements `rocmdoctor ck`.
package ck

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocmdoctor/rocmdoctor/ck"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
)

// Options holds the flags of one ck run.
type Options struct {
	IO        *cli.IOStreams
	Prefix    string
	Require   []string
	Preset    string
	Consumers []string
	JSON      bool
	FailOn    string
}

// NewCmdCK builds the command; runF replaces Run in tests.
func NewCmdCK(io *cli.IOStreams, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: io}
	cmd := &cobra.Command{
		Use:   "ck PREFIX",
		Short: "Verify a composable_kernel install exports what MIOpen will ask for",
		Long: `Read PREFIX/{lib,lib64,share}/cmake/composable_kernel/composable_kernelConfig.cmake
with a built-in CMake reader (no cmake needed), evaluate find_package(composable_kernel
COMPONENTS …) for the requested components, and check every Targets file and its
-<config> companions: IMPORTED_LOCATION files exist and are archives of x86-64
host objects, the archives define ck::tensor_operation::device::instance::add_device_…
functions, INTERFACE_LINK_LIBRARIES name targets that exist, and (--consumer) the
instance functions a consumer such as libMIOpen.so calls are defined. Missing
components are explained from the GPU targets the archives were built for (XDL needs
gfx9, WMMA gfx11, DL needs DL_KERNELS, INSTANCES_ONLY ignores GPU_TARGETS).

Presets (--for): miopen-6.0 (device_operations), miopen-6.1 and miopen-6.2 (other, gemm,
conv, contraction, reduction), miopen-6.3 and miopen-6.4 (other, gemm, conv, reduction;
mha optional). Exit status 3 on findings.`,
		Example: `  rocmdoctor ck /opt/rocm
  rocmdoctor ck --for miopen-6.2 --consumer /opt/rocm/lib/libMIOpen.so /opt/rocm
  rocmdoctor ck --require device_conv_operations,device_contraction_operations $out`,
		Args: cli.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Prefix = args[0]
			if opts.Preset != "" {
				if _, ok := ck.Presets[opts.Preset]; !ok {
					return &cli.UsageError{Err: fmt.Errorf("--for: unknown preset %q (miopen-6.0 … miopen-6.4)", opts.Preset)}
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(opts)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&opts.Require, "require", nil, "components that must be installed (comma-separated, repeatable)")
	f.StringVar(&opts.Preset, "for", "", "the components a consumer release asks for: miopen-6.0 … miopen-6.4")
	f.StringArrayVar(&opts.Consumers, "consumer", nil, "check the add_device_…_instances references of `FILE` (repeatable)")
	f.BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	cli.FailOnVar(f, &opts.FailOn, cli.FailOnUsage)
	return cmd
}

// Run checks and renders.
func Run(opts *Options) error {
	rep, err := ck.Check(opts.Prefix, ck.Options{Require: opts.Require, Preset: opts.Preset, Consumers: opts.Consumers})
	if err != nil {
		return err
	}
	return cli.Emit(opts.IO.Out, opts.JSON, rep, func() error { return render(opts.IO, rep) }, rep.Findings, opts.FailOn)
}

func render(io *cli.IOStreams, rep *ck.Report) error {
	c := io.Colors()
	w := io.Out
	cli.Printf(w, "%s\n  advertises: %s\n  requested:  %s\n", rep.Config, strings.Join(rep.Advertised, " "), strings.Join(rep.Requested, " "))
	var rows [][]string
	// Each row says what is wrong with it: the component's status, or
	// its target's.
	colour := func(s string) string {
		switch {
		case s == "ok":
			return c.Green(s)
		case strings.Contains(s, "optional"):
			return c.Yellow(s)
		}
		return c.Red(strings.ToUpper(s))
	}
	for _, comp := range rep.Components {
		if len(comp.Targets) == 0 {
			rows = append(rows, []string{comp.Name, colour(comp.Status), "", "", "", ""})
		}
		for _, t := range comp.Targets {
			rows = append(rows, []string{comp.Name, colour(t.Status), t.Location, t.Kind, fmt.Sprint(t.Instances), strings.Join(t.GPUTargets, " ")})
		}
	}
	if err := io.Table([]string{"COMPONENT", "STATUS", "LOCATION", "KIND", "INSTANCES", "GPU TARGETS"}, rows); err != nil {
		return err
	}
	for _, f := range rep.Findings {
		cli.Printf(w, "%s %s: %s\n  fix: %s\n", c.Red(string(f.Severity)), f.Rule, f.Message, f.Fix)
	}
	return nil
}
