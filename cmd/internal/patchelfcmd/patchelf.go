// Package patchelfcmd implements `rocmdoctor patchelf`, a drop-in for NixOS
// patchelf, and `rocmdoctor patch`, the same edits with a dry run.
package patchelfcmd

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/internal/regfile"
	"github.com/rocmdoctor/rocmdoctor/internal/safefile"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
	"github.com/spf13/cobra"
)

// Options is a parsed command line.
type Options struct {
	IO      *cli.IOStreams
	Ctx     context.Context // cancelled (SIGINT, SIGTERM): no further file is edited; nil is never
	Files   []string
	Output  string
	Debug   bool
	DryRun  bool
	JSON    bool
	InPlace bool
	Native  bool // `rocmdoctor patch`

	PageSize uint64
	Force    bool
	// NoClobber keeps moved sections' old bytes (--no-clobber-old-sections).
	NoClobber bool
	Allowed   []string

	printInterp, printOSABI, printSoname, printRPath, printNeeded, printExecstack bool
	setOSABI, setSoname, setInterp                                                *string
	rpathOp                                                                       *patchelf.Edit
	remove, add                                                                   []string
	replace                                                                       [][2]string
	clearVersions                                                                 []string
	noDefaultLib, debugTag, resolutionCache                                       bool
	stackOp                                                                       *patchelf.Kind
	renameSymbols                                                                 string
	renames                                                                       map[string]string
}

const usage = `syntax: %s
  [--page-size SIZE]
  [--set-interpreter FILENAME]
  [--set-os-abi ABI]
  [--print-interpreter]
  [--print-os-abi]
  [--print-soname]
  [--set-soname SONAME]
  [--set-rpath RPATH]
  [--add-rpath RPATH]
  [--remove-rpath]
  [--shrink-rpath]
  [--allowed-rpath-prefixes PREFIXES]
  [--print-rpath]
  [--force-rpath]
  [--add-needed LIBRARY]
  [--remove-needed LIBRARY]
  [--replace-needed LIBRARY NEW_LIBRARY]
  [--print-needed]
  [--no-default-lib]
  [--clear-symbol-version SYMBOL]
  [--rename-dynamic-symbols NAME_MAP_FILE]  lines of "OLD NEW"
  [--add-debug-tag]
  [--build-resolution-cache]  NixOS's note of where each NEEDED library is found
  [--print-execstack]
  [--clear-execstack]
  [--set-execstack]
  [--output FILE]
  [--no-sort]           accepted; segments are never reordered
  [--no-clobber-old-sections]  keep the bytes of moved sections (default: overwritten)
  [--in-place]          keep the inode (hard links) instead of replacing the file
  [--debug]
  [--version]
  FILENAME...

Values may be given as @FILE to read them from FILE.
`

// NewCmdPatchelf builds `patchelf` (native=false) or `patch` (native=true).
func NewCmdPatchelf(io *cli.IOStreams, version string, native bool) *cobra.Command {
	name := "patchelf"
	short := "Drop-in replacement for NixOS patchelf that never corrupts a file"
	if native {
		name = "patch"
		short = "Edit RPATH/RUNPATH, NEEDED, SONAME, interpreter; --dry-run shows the plan"
	}
	cmd := &cobra.Command{
		Use:                name + " [OPTIONS] FILENAME...",
		Short:              short,
		Long:               short + ".\n\n" + fmt.Sprintf(usage, "rocmdoctor "+name) + extraHelp(native),
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := Parse(args, native)
			if err != nil {
				return err
			}
			if opts == nil {
				return nil
			}
			opts.IO = io
			opts.Ctx = cmd.Context()
			return Run(opts, version)
		},
	}
	return cmd
}

func extraHelp(native bool) string {
	if !native {
		return `
Edits are planned, verified by re-reading the result, and written to a
temporary file that replaces the original (or the file itself with --in-place).
On any error the file is left byte-identical. Exit status 1 on errors.`
	}
	return `
--dry-run      print the plan (patched ranges, moved sections, growth) and write nothing
--json         print the plan as JSON`
}

// Parse reads patchelf-style arguments.
func Parse(args []string, native bool) (*Options, error) {
	o := &Options{Native: native}
	val := func(i *int, name string) (string, error) {
		if *i+1 >= len(args) {
			return "", &cli.UsageError{Err: fmt.Errorf("%s needs an argument", name)}
		}
		*i++
		v := args[*i]
		if strings.HasPrefix(v, "@") {
			b, err := regfile.ReadFile(v[1:])
			if err != nil {
				return "", err
			}
			v = strings.TrimRight(string(b), "\n")
		}
		return v, nil
	}
	setRP := func(k patchelf.Kind, arg string) { e := patchelf.Edit{Kind: k, Arg: arg}; o.rpathOp = &e }
	for i := 0; i < len(args); i++ {
		a := args[i]
		var err error
		var v string
		switch a {
		case "--help", "-h":
			return nil, &helpError{}
		case "--version":
			return nil, &versionError{}
		case "--page-size":
			if v, err = val(&i, a); err == nil {
				var n uint64
				n, err = strconv.ParseUint(v, 0, 64)
				if err != nil || n == 0 || n&(n-1) != 0 {
					err = &cli.UsageError{Err: fmt.Errorf("invalid argument to --page-size: %s", v)}
				}
				o.PageSize = n
			}
		case "--set-interpreter", "--interpreter":
			if v, err = val(&i, a); err == nil {
				o.setInterp = &v
			}
		case "--set-os-abi":
			if v, err = val(&i, a); err == nil {
				if _, perr := patchelf.ParseOSABI(v); perr != nil {
					err = &cli.UsageError{Err: perr}
				}
				o.setOSABI = &v
			}
		case "--print-interpreter":
			o.printInterp = true
		case "--print-os-abi":
			o.printOSABI = true
		case "--print-soname":
			o.printSoname = true
		case "--set-soname":
			if v, err = val(&i, a); err == nil {
				o.setSoname = &v
			}
		case "--set-rpath":
			if v, err = val(&i, a); err == nil {
				setRP(patchelf.KindSetRPath, v)
			}
		case "--add-rpath":
			if v, err = val(&i, a); err == nil {
				setRP(patchelf.KindAddRPath, v)
			}
		case "--remove-rpath":
			setRP(patchelf.KindRemoveRPath, "")
		case "--shrink-rpath":
			setRP(patchelf.KindShrinkRPath, "")
		case "--allowed-rpath-prefixes":
			if v, err = val(&i, a); err == nil {
				o.Allowed = append(o.Allowed, strings.Split(v, ":")...)
			}
		case "--print-rpath":
			o.printRPath = true
		case "--force-rpath":
			o.Force = true
		case "--add-needed":
			if v, err = val(&i, a); err == nil {
				o.add = append(o.add, v)
			}
		case "--remove-needed":
			if v, err = val(&i, a); err == nil {
				o.remove = append(o.remove, v)
			}
		case "--replace-needed":
			var w string
			if v, err = val(&i, a); err == nil {
				if w, err = val(&i, a); err == nil {
					o.replace = append(o.replace, [2]string{v, w})
				}
			}
		case "--print-needed":
			o.printNeeded = true
		case "--no-default-lib":
			o.noDefaultLib = true
		case "--no-sort":
			// Segments are never reordered; accepted for compatibility.
		case "--no-clobber-old-sections":
			o.NoClobber = true
		case "--clear-symbol-version":
			if v, err = val(&i, a); err == nil {
				o.clearVersions = append(o.clearVersions, v)
			}
		case "--add-debug-tag":
			o.debugTag = true
		case "--build-resolution-cache":
			o.resolutionCache = true
		case "--print-execstack":
			o.printExecstack = true
		case "--clear-execstack":
			k := patchelf.KindClearExecStack
			o.stackOp = &k
		case "--set-execstack":
			k := patchelf.KindSetExecStack
			o.stackOp = &k
		case "--rename-dynamic-symbols":
			if v, err = val(&i, a); err == nil {
				o.renameSymbols = v
			}
		case "--output":
			o.Output, err = val(&i, a)
		case "--debug":
			o.Debug = true
		case "--in-place":
			o.InPlace = true
		case "--dry-run":
			o.DryRun = true
		case "--json":
			o.JSON = true
		default:
			if strings.HasPrefix(a, "-") && a != "-" {
				return nil, &cli.UsageError{Err: fmt.Errorf("unknown option %s", a)}
			}
			o.Files = append(o.Files, a)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(o.Files) == 0 {
		return nil, &cli.UsageError{Err: errors.New("missing filename")}
	}
	if o.Force && o.resolutionCache {
		return nil, &cli.UsageError{Err: errors.New("--build-resolution-cache cannot be combined with --force-rpath")}
	}
	if o.Output != "" && len(o.Files) > 1 {
		return nil, &cli.UsageError{Err: errors.New("--output option only allowed with single input file")}
	}
	if o.renameSymbols != "" {
		b, err := regfile.ReadFile(o.renameSymbols)
		if err != nil {
			return nil, err
		}
		if o.renames, err = patchelf.ParseRenameMap(string(b)); err != nil {
			return nil, fmt.Errorf("%s: %w", o.renameSymbols, err)
		}
	}
	return o, nil
}

type helpError struct{}

func (*helpError) Error() string { return "help" }

type versionError struct{}

func (*versionError) Error() string { return "version" }

// Edits returns the edits in patchelf's fixed order.
func (o *Options) Edits() []patchelf.Edit {
	var es []patchelf.Edit
	if o.setOSABI != nil {
		es = append(es, patchelf.Edit{Kind: patchelf.KindSetOSABI, Arg: *o.setOSABI})
	}
	if o.setSoname != nil {
		es = append(es, patchelf.Edit{Kind: patchelf.KindSetSoname, Arg: *o.setSoname})
	}
	if o.setInterp != nil {
		es = append(es, patchelf.Edit{Kind: patchelf.KindSetInterpreter, Arg: *o.setInterp})
	}
	if o.rpathOp != nil {
		e := *o.rpathOp
		e.Allowed = o.Allowed
		es = append(es, e)
	}
	for _, n := range o.remove {
		es = append(es, patchelf.Edit{Kind: patchelf.KindRemoveNeeded, Arg: n})
	}
	for _, r := range o.replace {
		es = append(es, patchelf.Edit{Kind: patchelf.KindReplaceNeeded, Arg: r[0], Arg2: r[1]})
	}
	for _, n := range o.add {
		es = append(es, patchelf.Edit{Kind: patchelf.KindAddNeeded, Arg: n})
	}
	for _, s := range o.clearVersions {
		es = append(es, patchelf.Edit{Kind: patchelf.KindClearSymbolVersion, Arg: s})
	}
	if o.noDefaultLib {
		es = append(es, patchelf.Edit{Kind: patchelf.KindNoDefaultLib})
	}
	if o.debugTag {
		es = append(es, patchelf.Edit{Kind: patchelf.KindAddDebugTag})
	}
	if o.resolutionCache {
		es = append(es, patchelf.Edit{Kind: patchelf.KindBuildResolutionCache})
	}
	if o.stackOp != nil {
		es = append(es, patchelf.Edit{Kind: *o.stackOp})
	}
	if o.renames != nil {
		es = append(es, patchelf.Edit{Kind: patchelf.KindRenameDynamicSymbols, Renames: o.renames})
	}
	return es
}

// errPrintNothing: the file is a separate debug file, for which the print
// options print nothing (patchelf reads its NOBITS .dynamic as empty).
var errPrintNothing = errors.New("nothing to print")

// prog is the name errors are prefixed with.
func (o *Options) prog() string {
	if o.Native {
		return "rocmdoctor"
	}
	return "patchelf"
}

// Run applies the options to every file.
func Run(o *Options, version string) error {
	notice := func(msg string) { fmt.Fprintf(o.IO.ErrOut, "%s: %s\n", o.prog(), msg) }
	// An in-place edit that was killed is rolled back by the next run.
	if !o.DryRun {
		safefile.Recover("", notice)
	}
	failed := 0
	for _, path := range o.Files {
		if o.Ctx != nil && o.Ctx.Err() != nil {
			fmt.Fprintf(o.IO.ErrOut, "%s: interrupted before %s\n", o.prog(), path)
			return cli.ErrSilent
		}
		if err := o.one(path); err != nil {
			failed++
			if o.Native {
				// rocmdoctor's own command speaks as the others do.
				fmt.Fprintf(o.IO.ErrOut, "rocmdoctor: %s\n", err)
			} else {
				// The drop-in answers in NixOS patchelf's words.
				fmt.Fprintf(o.IO.ErrOut, "patchelf: %s\n", describe(path, err))
			}
		}
	}
	if failed > 0 {
		return cli.ErrSilent
	}
	return nil
}

func describe(path string, err error) string {
	var pe *patchelf.Error
	switch {
	case errors.As(err, &pe) && pe.Patchelf != "":
		return pe.Path + ": " + pe.Patchelf
	case errors.Is(err, elfx.ErrNotELF):
		return path + ": not an ELF executable"
	case os.IsNotExist(err):
		return "getting info about '" + path + "': No such file or directory"
	}
	return err.Error()
}

func (o *Options) one(path string) error {
	// What a file's print options print is written only when the whole
	// file succeeds: never part of it and then an error.
	var buf bytes.Buffer
	if err := o.oneTo(path, &buf); err != nil {
		return err
	}
	_, err := o.IO.Out.Write(buf.Bytes())
	return err
}

func (o *Options) oneTo(path string, out io.Writer) error {
	f, err := elfx.Open(path)
	if err != nil {
		return err
	}
	d, derr := f.Dynamic()
	// An object file has neither: say what it is, as the edits do, rather
	// than "most likely statically linked".
	if f.Type == elf.ET_REL && (o.printInterp || o.printSoname || o.printRPath || o.printNeeded) {
		f.Close()
		return fmt.Errorf("%s: not a linked file (relocatable object): it has no interpreter or dynamic section", path)
	}
	if o.printInterp {
		s, _ := f.Interp()
		if s == "" {
			f.Close()
			if o.Native {
				return fmt.Errorf("%s: no program interpreter (no PT_INTERP): a shared library or a statically linked program names none", path)
			}
			return fmt.Errorf("%s: cannot find section '.interp'. The input file is most likely statically linked", path)
		}
		fmt.Fprintln(out, s)
	}
	if o.printOSABI {
		fmt.Fprintln(out, patchelf.OSABIName(byte(f.OSABI)))
	}
	// A separate debug file (strip --only-keep-debug) keeps a .dynamic
	// section header of type NOBITS: patchelf reads it as empty and its
	// print options print nothing.
	debugFile := false
	if ef := f.ELF(); errors.Is(derr, elfx.ErrNoDynamic) && ef != nil {
		if ds := ef.Section(".dynamic"); ds != nil && ds.Type == elf.SHT_NOBITS {
			debugFile = true
		}
	}
	needDyn := func() error {
		if derr != nil {
			if debugFile {
				return errPrintNothing
			}
			if o.Native {
				if errors.Is(derr, elfx.ErrNoDynamic) {
					return fmt.Errorf("%s: no dynamic section: the file is statically linked", path)
				}
				return derr // a malformed one: the error names the file and offset
			}
			return fmt.Errorf("%s: cannot find section '.dynamic'. The input file is most likely statically linked", path)
		}
		return nil
	}
	if o.printSoname {
		switch err := needDyn(); {
		case err == errPrintNothing:
		case err != nil:
			f.Close()
			return err
		case d.Soname != "": // (patchelf prints nothing for none)
			fmt.Fprintln(out, d.Soname)
		}
	}
	if o.printRPath {
		switch err := needDyn(); {
		case err == errPrintNothing:
		case err != nil:
			f.Close()
			return err
		case d.HasRunPath:
			fmt.Fprintln(out, d.RunPath)
		default:
			fmt.Fprintln(out, d.RPath)
		}
	}
	if o.printNeeded {
		switch err := needDyn(); {
		case err == errPrintNothing:
		case err != nil:
			f.Close()
			return err
		default:
			for _, n := range d.Needed {
				fmt.Fprintln(out, n)
			}
		}
	}
	if o.printExecstack {
		st := f.GNUStack()
		mark := "-"
		switch {
		case !st.Present:
			mark = "?"
		case st.Executable:
			mark = "X"
		}
		fmt.Fprintf(out, "execstack: %s\n", mark)
	}
	f.Close()
	edits := o.Edits()
	if len(edits) == 0 && o.Output == "" {
		return nil
	}
	plan, err := patchelf.EditFile(path, edits, patchelf.Options{PageSize: o.PageSize, ForceRPath: o.Force, NoClobberOldSections: o.NoClobber},
		patchelf.WriteOptions{Output: o.Output, InPlace: o.InPlace, DryRun: o.DryRun, Notice: func(msg string) {
			fmt.Fprintf(o.IO.ErrOut, "%s: %s\n", o.prog(), msg)
		}})
	if err != nil {
		return err
	}
	for _, w := range plan.Warnings {
		fmt.Fprintf(o.IO.ErrOut, "warning: %s\n", w) // (patchelf's words)
	}
	if o.JSON {
		return cli.WriteJSON(out, plan)
	}
	if o.Debug || o.DryRun {
		w := o.IO.ErrOut
		if o.DryRun {
			w = out
		}
		fmt.Fprintf(w, "%s: %d patch(es)", path, len(plan.Patches))
		switch {
		case plan.Extended != "":
			fmt.Fprintf(w, ", %s grows in place at the end of the last PT_LOAD (%d bytes at 0x%x)", plan.Extended, plan.AppendSize, plan.AppendOffset)
		case plan.AppendSize > 0:
			fmt.Fprintf(w, ", new PT_LOAD of %d bytes at 0x%x (moves %s)", plan.AppendSize, plan.AppendOffset, strings.Join(plan.Moved, ", "))
		}
		fmt.Fprintf(w, "; size %d -> %d bytes\n", plan.OldSize, plan.NewSize)
		for _, p := range plan.Patches {
			fmt.Fprintf(w, "  write %d bytes at 0x%x: %s\n", p.Size, p.Offset, p.What)
		}
	}
	return nil
}

// Main runs the command line args as NixOS patchelf does when rocmdoctor
// is invoked through a link named patchelf: the same options; help (no
// arguments, --help) on standard error; every error, an argument error
// too, printed as "patchelf: …" with exit status 1 (patchelf has no
// usage status).
func Main(ctx context.Context, io *cli.IOStreams, args []string, version string) int {
	help := func() { fmt.Fprintf(io.ErrOut, usage, "patchelf") }
	if len(args) == 0 {
		help()
		return 1
	}
	opts, err := Parse(args, false)
	var he *helpError
	var ve *versionError
	switch {
	case errors.As(err, &he):
		help()
		return 0
	case errors.As(err, &ve):
		fmt.Fprintf(io.Out, "patchelf 0.19.0 (rocmdoctor %s)\n", version)
		return 0
	case err != nil:
		fmt.Fprintf(io.ErrOut, "patchelf: %s\n", cli.EscapeMessage(patchelfWords(err)))
		return 1
	}
	opts.IO, opts.Ctx = io, ctx
	if err := Run(opts, version); err != nil {
		if !errors.Is(err, cli.ErrSilent) {
			fmt.Fprintf(io.ErrOut, "patchelf: %s\n", cli.EscapeMessage(patchelfWords(err)))
		}
		return 1
	}
	return 0
}

// patchelfWords is an argument error in patchelf's words ("missing
// argument" for an option without its value; "getting info about 'F': …"
// for an @F that cannot be read, as patchelf's readFile says).
func patchelfWords(err error) string {
	var pe *os.PathError
	switch {
	case strings.HasSuffix(err.Error(), "needs an argument"):
		return "missing argument"
	case errors.As(err, &pe):
		return fmt.Sprintf("getting info about '%s': %s", pe.Path, syscallText(pe.Err))
	}
	return err.Error()
}

// syscallText is strerror's text, as patchelf's SysError prints it
// ("No such file or directory"; Go's errors are lower case).
func syscallText(err error) string {
	s := err.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
