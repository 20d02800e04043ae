// Package prefixcmd implements `rocmdoctor prefix`.
package prefixcmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/prefix"
	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// NewCmdPrefix builds the command.
func NewCmdPrefix(io *cli.IOStreams) *cobra.Command {
	var o prefix.Options
	var forArgs []string
	var jsonOut bool
	var failOn string
	var rf cli.ResolverFlags
	cmd := &cobra.Command{
		Use:   "prefix [PREFIX]",
		Short: "Is this ROCm install consistent? Version skew, duplicate providers, toolchain layout",
		Long: `Check a ROCm install (default $ROCM_PATH, else /opt/rocm; add Nix store paths with
--lib-dir): what it says about its release (rocm-core's version files, HIP's cmake
version and its hip_X.Y symbol version nodes) and which parts disagree; every
closure in the prefix (and programs given with --for FILE) for two copies of LLVM,
libstdc++/libc++, the HIP runtime or the unwinder, with the winner by load order
and who linked against the loser; the clang under the prefix (its version read
from the binary, never run), its resource directory and headers, and the AMDGPU
device-library bitcode where that clang looks; --for migraphx checks the
composable_kernel headers MIGraphX includes. Exit status 3 on findings.`,
		Example: `  rocmdoctor prefix /opt/rocm-6.2.2
  rocmdoctor prefix --for /usr/bin/blender /opt/rocm
  rocmdoctor prefix --for migraphx $out`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ro, err := rf.Options(cmd, io)
			if err != nil {
				return err
			}
			o.Resolver = ro
			o.LibDirs = rf.LibDirs
			o.Resolver.LibDirs = nil
			for _, f := range forArgs {
				if _, ok := prefix.HeaderSets[f]; ok {
					o.Headers = append(o.Headers, f)
				} else {
					o.Programs = append(o.Programs, rpath.FileInRoot(ro.Root, f))
				}
			}
			dir := ""
			if len(args) == 1 {
				dir = args[0]
			} else if p := os.Getenv("ROCM_PATH"); p != "" {
				dir = p
			} else if _, err := os.Stat(rpath.FileInRoot(ro.Root, "/opt/rocm")); err == nil {
				dir = "/opt/rocm"
			} else {
				return &cli.UsageError{Err: errors.New("no PREFIX given, and neither $ROCM_PATH nor /opt/rocm exists")}
			}
			dir = rpath.FileInRoot(ro.Root, dir)
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			rep, err := prefix.Check(ctx, dir, o)
			if err != nil {
				return err
			}
			return cli.Emit(io.Out, jsonOut, rep, func() error { render(io, rep); return nil }, rep.Findings, failOn)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&forArgs, "for", nil, "a program whose closure to check, or a header set (migraphx); repeatable")
	f.BoolVar(&jsonOut, "json", false, "print the report as JSON")
	cli.FailOnVar(f, &failOn, cli.FailOnUsage)
	rf.Register(f)
	return cmd
}

func render(io *cli.IOStreams, rep *prefix.Report) {
	w := io.Out
	c := io.Colors()
	cli.Printf(w, "%s\n", c.Bold(rep.Prefix))
	var rows [][]string
	for _, v := range rep.Versions {
		rows = append(rows, []string{v.Component, v.Version, v.Release, v.Evidence})
	}
	if len(rows) > 0 {
		io.Table([]string{"COMPONENT", "VERSION", "RELEASE", "EVIDENCE"}, rows)
		cli.Printf(w, "majority release: %s\n", rep.Majority)
	}
	tc := rep.Toolchain
	if tc.Clang != "" {
		fmt.Fprintf(w, "clang %s at %s\n  resource dir: %s (headers: %v)\n  device libs: %s %s\n", tc.Version, tc.Clang, tc.ResourceDir, tc.Headers,
			tc.DeviceLibs, strings.Join(tc.DeviceLibFiles, " "))
	}
	for _, p := range rep.Providers {
		// Each closure has its own winner (load order): name the closure.
		cli.Printf(w, "%s in the closure of %s: %s wins over %s\n", p.Kind, p.Closure, p.Winner, strings.Join(p.Others, ", "))
	}
	for _, f := range rep.Findings {
		cli.Printf(w, "%s %s: %s\n  fix: %s\n", c.Red(string(f.Severity)), f.Rule, f.Message, f.Fix)
	}
	if len(rep.Findings) == 0 {
		cli.Printf(w, "%s\n", "no findings")
	}
}
