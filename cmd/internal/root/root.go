// Package root assembles the rocmdoctor command tree and maps errors to exit
// codes.
package root

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/rocmdoctor/rocmdoctor/check"
	"github.com/rocmdoctor/rocmdoctor/ck"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/checkcmd"
	ckcmd "github.com/rocmdoctor/rocmdoctor/cmd/internal/ck"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/deps"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/gpus"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/inspect"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/patchelfcmd"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/prefixcmd"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/symbols"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/unwind"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/wheelcmd"
	"github.com/rocmdoctor/rocmdoctor/gpu"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
	"github.com/rocmdoctor/rocmdoctor/prefix"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
	"github.com/rocmdoctor/rocmdoctor/wheel"
)

// Version is set at link time (-ldflags "-X …/root.Version=v1.2.3"); when
// empty the module version from the build info is used.
var Version = ""

var version = sync.OnceValue(func() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(Version, bi)
})

// versionOf is the version to print: the one set at link time, else the
// module's (a tag, for `go install …@vX.Y.Z`), else the VCS revision the
// binary was built from ("devel-0123456789ab", "-dirty" with uncommitted
// changes), else "(devel)".
func versionOf(linked string, bi *debug.BuildInfo) string {
	if linked != "" {
		return linked
	}
	if bi == nil {
		return "(devel)"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value[:min(12, len(s.Value))]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	if rev != "" {
		return "devel-" + rev + dirty
	}
	return "(devel)"
}

// NewCmdRoot builds the command tree writing to io.
func NewCmdRoot(io *cli.IOStreams) *cobra.Command { return newCmdRoot(io, "") }

// subcommand is a top-level command, by name, built on demand.
type subcommand struct {
	name  string
	build func() *cobra.Command
}

func subcommands(io *cli.IOStreams) []subcommand {
	v := version()
	return []subcommand{
		{"version", func() *cobra.Command { return newCmdVersion(io) }},
		{"inspect", func() *cobra.Command { return inspect.NewCmdInspect(io, nil) }},
		{"deps", func() *cobra.Command { return deps.NewCmdDeps(io, nil) }},
		{"symbols", func() *cobra.Command { return symbols.NewCmdSymbols(io, nil) }},
		{"unwind", func() *cobra.Command { return unwind.NewCmdUnwind(io, nil) }},
		{"gpus", func() *cobra.Command { return gpus.NewCmdGPUs(io, nil) }},
		{"check", func() *cobra.Command { return checkcmd.NewCmdCheck(io, v, nil) }},
		{"ck", func() *cobra.Command { return ckcmd.NewCmdCK(io, nil) }},
		{"patchelf", func() *cobra.Command { return patchelfcmd.NewCmdPatchelf(io, v, false) }},
		{"patch", func() *cobra.Command { return patchelfcmd.NewCmdPatchelf(io, v, true) }},
		{"wheel", func() *cobra.Command { return wheelcmd.NewCmdWheel(io) }},
		{"prefix", func() *cobra.Command { return prefixcmd.NewCmdPrefix(io) }},
		{"man", func() *cobra.Command { return newCmdMan(io) }},
	}
}

// newCmdRoot builds the root command with every subcommand, or with only
// the one named only: a command line that names its command needs no
// other (building them all is a measurable part of every start: see
// docs/performance.md). Help listings, suggestions for a mistyped name and completion
// need the whole tree.
func newCmdRoot(io *cli.IOStreams, only string) *cobra.Command {
	var color string
	cmd := &cobra.Command{
		Use:   "rocmdoctor <command> [flags]",
		Short: "Diagnose and repair ELF binaries of the ROCm stack",
		Long: `rocmdoctor reads ELF shared objects, executables, objects and static archives
and explains the failures ROCm packagers hit: missing libraries and symbols,
wrong-architecture libraries on a link line, GPU targets, and how to fix them.

Exit status: 0 ok, 1 error, 2 usage error, 3 findings at or above --fail-on.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			tune(cmd)
			return io.SetColor(color)
		},
	}
	cmd.SetOut(io.Out)
	cmd.SetErr(io.ErrOut)
	cmd.SetIn(io.In)
	cmd.PersistentFlags().StringVar(&color, "color", "auto", "colour output: auto, always or never (auto honours NO_COLOR)")
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &cli.UsageError{Err: err} })
	cmd.SetVersionTemplate("rocmdoctor {{.Version}}\n")

	for _, sc := range subcommands(io) {
		if only == "" || sc.name == only {
			cmd.AddCommand(sc.build())
		}
	}
	if only == "" {
		cmd.InitDefaultCompletionCmd() // so the generated docs include it
	} else {
		cmd.CompletionOptions.DisableDefaultCmd = true // cobra adds it at Execute
	}
	for _, c := range cmd.Commands() {
		refuseUnknownSubcommands(c)
	}
	completeEnums(cmd)
	return cmd
}

// completeEnums registers shell completion of the values of every flag
// that takes one of a fixed set, in every command that has it.
func completeEnums(root *cobra.Command) {
	presets := slices.Sorted(maps.Keys(ck.Presets))
	hwcaps := []string{"auto", "none", "x86-64-v2", "x86-64-v3", "x86-64-v4"}
	byFlag := map[string]func(c *cobra.Command) []string{
		"color":         func(*cobra.Command) []string { return []string{"auto", "always", "never"} },
		"fail-on":       func(*cobra.Command) []string { return []string{"error", "warning", "note", "never"} },
		"hwcaps":        func(*cobra.Command) []string { return hwcaps },
		"legacy-hwcaps": func(*cobra.Command) []string { return []string{"auto", "none"} },
		"format": func(c *cobra.Command) []string {
			if c.Name() == "gpus" {
				return []string{"table", "markdown"}
			}
			return []string{"table", "plain", "json", "sarif", "junit"}
		},
		"for": func(c *cobra.Command) []string {
			if c.Name() == "ck" {
				return presets
			}
			return nil
		},
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, values := range byFlag {
			if c.LocalFlags().Lookup(name) == nil {
				continue
			}
			if vs := values(c); vs != nil {
				c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(vs, cobra.ShellCompDirectiveNoFileComp))
			}
		}
		for _, sc := range c.Commands() {
			walk(sc)
		}
	}
	walk(root)
}

// refuseUnknownSubcommands makes a command that only groups others
// (wheel, completion) refuse an argument that names none of them, as the
// root command does. Cobra answers it with the help text and exit status
// 0, so a typo in a CI script (`rocmdoctor wheel relnk …`) passed.
func refuseUnknownSubcommands(c *cobra.Command) {
	if !c.HasSubCommands() {
		return
	}
	if !c.Runnable() {
		if !strings.Contains(c.Use, " ") {
			c.Use += " COMMAND" // the usage line: it runs nothing itself
		}
		c.Args = func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
			if c.SuggestionsMinimumDistance <= 0 {
				c.SuggestionsMinimumDistance = 2 // as cobra uses for the root
			}
			if s := c.SuggestionsFor(args[0]); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return &cli.UsageError{Err: errors.New(msg)}
		}
		c.RunE = func(c *cobra.Command, args []string) error { return c.Help() }
	}
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
}

// versionJSON is what version --json prints.
type versionJSON struct {
	SchemaVersion int    `json:"schema_version"`
	Version       string `json:"version"`
	Go            string `json:"go"`
}

// JSONOutputs are the values each command prints with --json, by command
// ("patch" is patchelf's plan), for their schemas (docs/schema).
func JSONOutputs() map[string]any {
	return map[string]any{
		"check":        check.Report{},
		"symbols":      symcheck.Report{},
		"deps":         deps.Result{},
		"unwind":       unwind.Result{},
		"ck":           ck.Report{},
		"gpus":         gpu.Report{},
		"prefix":       prefix.Report{},
		"inspect":      inspect.Result{},
		"patch":        patchelf.Plan{},
		"wheel-relink": wheel.Plan{},
		"version":      versionJSON{},
	}
}

func newCmdVersion(io *cli.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the rocmdoctor version",
		Args:  cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
				return cli.WriteJSON(io.Out, versionJSON{1, version(), runtime.Version()})
			}
			_, err := fmt.Fprintf(io.Out, "rocmdoctor %s\n", version())
			return err
		},
	}
	cmd.Flags().Bool("json", false, "print the version as JSON")
	return cmd
}

// Main runs the command line and returns the exit status; ctx is
// cancelled by SIGINT and SIGTERM.
func Main(ctx context.Context, args []string) int {
	io := cli.System()
	return RunContext(ctx, io, args)
}

// MainPatchelf runs args as NixOS patchelf: rocmdoctor invoked through a
// link (symbolic or hard) named patchelf.
func MainPatchelf(ctx context.Context, args []string) int {
	io := cli.System()
	code := patchelfcmd.Main(ctx, io, args, version())
	if err := io.Flush(); err != nil {
		fmt.Fprintf(io.ErrOut, "patchelf: %v\n", err)
		code = 1
	}
	return code
}

// Run executes args against io and returns the exit status, printing errors.
func Run(io *cli.IOStreams, args []string) int {
	return RunContext(context.Background(), io, args)
}

// RunContext is Run with a context the commands see.
func RunContext(ctx context.Context, io *cli.IOStreams, args []string) int {
	code := run(ctx, io, args)
	if err := io.Flush(); err != nil {
		fmt.Fprintf(io.ErrOut, "rocmdoctor: %s\n", cli.EscapeMessage(err.Error()))
		code = max(code, cli.ExitError)
	}
	return code
}

func run(ctx context.Context, io *cli.IOStreams, args []string) int {
	only := ""
	if len(args) > 0 {
		for _, sc := range subcommands(io) {
			if sc.name == args[0] {
				only = sc.name
			}
		}
	}
	cmd := newCmdRoot(io, only)
	cmd.SetArgs(args)
	ran, err := cmd.ExecuteContextC(ctx)
	io.FlushWarnings()
	if err != nil && (err.Error() == "help" || err.Error() == "version") {
		// `rocmdoctor patchelf --help/--version`, parsed by the command itself.
		if err.Error() == "version" {
			fmt.Fprintf(io.Out, "patchelf 0.19.0 (rocmdoctor %s)\n", version())
		} else {
			sub, _, _ := cmd.Find(args)
			fmt.Fprintln(io.Out, sub.Long)
		}
		return cli.ExitOK
	}
	if err != nil && isCobraUsage(err) {
		err = &cli.UsageError{Err: err}
	}
	if err != nil && !errors.Is(err, cli.ErrSilent) {
		fmt.Fprintf(io.ErrOut, "rocmdoctor: %s\n", cli.EscapeMessage(err.Error()))
		var ue *cli.UsageError
		if errors.As(err, &ue) {
			// The help of the command that was given (its flags and
			// arguments), not the root's list of commands.
			path := "rocmdoctor"
			if ran != nil {
				path = ran.CommandPath()
			}
			fmt.Fprintf(io.ErrOut, "Run '%s --help' for usage.\n", path)
		}
	}
	return cli.ExitCode(err)
}

// isCobraUsage recognises the errors cobra itself returns for unknown
// commands and bad arguments.
func isCobraUsage(err error) bool {
	var ue *cli.UsageError
	if errors.As(err, &ue) {
		return false
	}
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "invalid argument", "accepts ", "requires at least", "flag needs an argument"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}
