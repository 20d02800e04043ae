// Package inspect implements `rocmdoctor inspect`.
package inspect

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/elfx"
)

// Options holds the inputs of one inspect run.
type Options struct {
	IO    *cli.IOStreams
	Paths []string
	JSON  bool
}

// NewCmdInspect builds the command; runF replaces Run in tests.
func NewCmdInspect(io *cli.IOStreams, runF func(*Options) error) *cobra.Command {
	opts := &Options{IO: io}
	cmd := &cobra.Command{
		Use:   "inspect FILE...",
		Short: "Show what a packager asks first about ELF files and archives",
		Long: `Show the kind, class, machine, OS ABI, type, SONAME, NEEDED, RPATH/RUNPATH,
interpreter, dynamic flags, GNU_STACK, TEXTREL, dynamic symbol counts, version
requirements and GPU targets of each file; for static archives, every member
with its machine and symbol counts.

A file that cannot be read is reported on one line on stderr; the other files
are still shown and the exit status is 1. So is a file read only in part (device
code in a damaged offload bundle, an unreadable archive member): what was read
is shown, with the error where the rest would be.`,
		Example: `  rocmdoctor inspect /usr/lib/x86_64-linux-gnu/librocsparse.so.0
  rocmdoctor inspect --json libMIOpen.so librockCompiler.a`,
		Args: cli.MinArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if runF != nil {
				return runF(opts)
			}
			return Run(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the reports as JSON")
	return cmd
}

// Result is the JSON document of an inspect run.
type Result struct {
	SchemaVersion int      `json:"schema_version"`
	Files         []Report `json:"files"`
}

// Run inspects every path and renders the reports.
func Run(opts *Options) error {
	res := Result{SchemaVersion: cli.SchemaVersion, Files: InspectAll(opts.Paths)}
	failed := 0
	for _, r := range res.Files {
		for _, p := range r.Problems() {
			failed++
			cli.Printf(opts.IO.ErrOut, "rocmdoctor: %s\n", p)
		}
	}
	if opts.JSON {
		if err := cli.WriteJSON(opts.IO.Out, res); err != nil {
			return err
		}
	} else {
		first := true
		for _, r := range res.Files {
			if r.Error != "" {
				continue
			}
			if !first {
				fmt.Fprintln(opts.IO.Out)
			}
			first = false
			if err := render(opts.IO, r); err != nil {
				return err
			}
		}
	}
	if failed > 0 {
		return cli.ErrSilent
	}
	return nil
}

func render(io *cli.IOStreams, r Report) error {
	c := io.Colors()
	cli.Printf(io.Out, "%s\n", c.Bold(r.Path))
	if r.ELF != nil {
		return io.KeyValues(elfRows(c, r.ELF))
	}
	a := r.Archive
	kv := [][2]string{
		{"kind", r.Kind + " (" + a.Format + ")"},
		{"members", strconv.Itoa(len(a.Members))},
		{"symbol index", indexText(a)},
	}
	if err := io.KeyValues(kv); err != nil {
		return err
	}
	rows := make([][]string, 0, len(a.Members))
	for _, m := range a.Members {
		machine := m.Machine
		if m.Target != "" {
			machine += " " + m.Target
		}
		if m.Error != "" {
			machine = c.Red("error: " + m.Error)
		}
		rows = append(rows, []string{m.Name, m.Kind, m.Class, machine,
			strconv.Itoa(m.Defined), strconv.Itoa(m.Undefined), targetsText(m.GPUTargets)})
	}
	return io.Table([]string{"MEMBER", "KIND", "CLASS", "MACHINE", "DEFINED", "UNDEFINED", "GPU TARGETS"}, rows)
}

func indexText(a *ArchiveReport) string {
	if !a.HasIndex {
		return "none (run ranlib)"
	}
	return strconv.Itoa(a.IndexSymbols) + " symbols"
}

func elfRows(c cli.Colors, e *ELFReport) [][2]string {
	kv := [][2]string{
		{"kind", "elf"},
		{"class", e.Class + " " + e.Data},
		{"type", e.Type},
		{"machine", e.Machine},
		{"osabi", fmt.Sprintf("%s (ABI version %d)", e.OSABI, e.ABIVersion)},
	}
	if e.AMDGPU != nil {
		kv = append(kv, [2]string{"amdgpu", fmt.Sprintf("%s, code object v%d, xnack %s, sramecc %s",
			e.AMDGPU.TargetID, e.AMDGPU.CodeObjectVersion, e.AMDGPU.Xnack, e.AMDGPU.SRAMECC)})
	}
	if e.Interp != "" {
		kv = append(kv, [2]string{"interpreter", e.Interp})
	}
	if !e.Dynamic {
		kv = append(kv, [2]string{"dynamic", "none (static or relocatable)"})
	} else {
		soname := e.Soname
		if soname == "" {
			soname = c.Yellow("(none)")
		}
		kv = append(kv,
			[2]string{"soname", soname},
			[2]string{"needed", listOrNone(e.Needed)})
		if e.RPath != nil {
			kv = append(kv, [2]string{"rpath", *e.RPath})
		}
		if e.RunPath != nil {
			kv = append(kv, [2]string{"runpath", *e.RunPath})
		}
		if len(e.DynFlags) > 0 {
			kv = append(kv, [2]string{"flags", strings.Join(e.DynFlags, " ")})
		}
		if len(e.DynFlags1) > 0 {
			kv = append(kv, [2]string{"flags_1", strings.Join(e.DynFlags1, " ")})
		}
	}
	stack := e.GNUStack
	if stack == "RWX" {
		stack = c.Red("RWX (executable stack)")
	}
	kv = append(kv, [2]string{"gnu_stack", stack})
	if e.TextRel {
		kv = append(kv, [2]string{"textrel", c.Red("yes")})
	}
	kv = append(kv, [2]string{"dynamic symbols", fmt.Sprintf("%d defined, %d undefined (%d weak)",
		e.Symbols.Defined, e.Symbols.Undefined, e.Symbols.WeakUndefined)})
	if e.CallsDlopen {
		kv = append(kv, [2]string{"dlopen", "called: loads libraries no NEEDED entry names (rocmdoctor deps --dlopen)"})
	}
	for _, d := range e.Dlopen {
		what := d.Priority
		if d.Feature != "" {
			what = d.Feature + ", " + what
		}
		kv = append(kv, [2]string{"dlopen declared", strings.Join(d.Sonames, " | ") + " (" + what + ")"})
	}
	if e.DlopenError != "" {
		kv = append(kv, [2]string{"dlopen declared", c.Red(e.DlopenError)})
	}
	for _, vn := range e.VersionNeeds {
		names := make([]string, len(vn.Versions))
		for i, v := range vn.Versions {
			names[i] = v.Name
		}
		kv = append(kv, [2]string{"versions needed", vn.File + ": " + strings.Join(names, " ")})
	}
	if len(e.VersionDefs) > 0 {
		kv = append(kv, [2]string{"versions defined", strings.Join(e.VersionDefs, " ")})
	}
	if len(e.GPUTargets) > 0 || e.DeviceCodeError != "" {
		t := targetsText(e.GPUTargets)
		if e.DeviceCodeError != "" {
			t = strings.TrimPrefix(t+"; ", "; ") + c.Red("error: "+e.DeviceCodeError)
		}
		kv = append(kv, [2]string{"gpu targets", t})
	}
	return kv
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "(none)"
	}
	return strings.Join(xs, " ")
}

// targetsText renders "gfx1030 ×111 (hipv4, v4), gfx803 …".
func targetsText(ts []elfx.GPUTargetStat) string {
	parts := make([]string, 0, len(ts))
	for _, t := range ts {
		var info []string
		if t.Kind != "" {
			info = append(info, t.Kind)
		} else {
			info = append(info, t.Container)
		}
		if t.CodeObjectVersion > 0 {
			info = append(info, fmt.Sprintf("v%d", t.CodeObjectVersion))
		}
		parts = append(parts, fmt.Sprintf("%s ×%d (%s)", t.TargetID, t.Count, strings.Join(info, ", ")))
	}
	return strings.Join(parts, ", ")
}
