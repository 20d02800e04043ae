package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rocmdoctor/rocmdoctor/rpath"
)

// ResolverFlags are the library-resolution flags shared by every command
// that resolves dependencies.
type ResolverFlags struct {
	LDLibraryPath string
	Env           bool
	Root          string
	LibDirs       []string
	HWCaps        string
	LegacyHWCaps  string
	Platform      string
}

// Register adds the flags to fs.
func (r *ResolverFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&r.LDLibraryPath, "ld-library-path", "", "search these colon-separated directories as LD_LIBRARY_PATH")
	fs.BoolVar(&r.Env, "env", false, "take LD_LIBRARY_PATH from the environment")
	fs.StringVar(&r.Root, "root", "", "resolve every absolute path, the ones named on the command line included, inside this sysroot `DIR`")
	fs.StringArrayVar(&r.LibDirs, "lib-dir", nil, "also search `DIR` after the object's own paths (repeatable)")
	fs.StringVar(&r.HWCaps, "hwcaps", "auto", "glibc-hwcaps level: auto (this CPU), none, x86-64-v2, x86-64-v3, x86-64-v4")
	fs.StringVar(&r.LegacyHWCaps, "legacy-hwcaps", "auto", "legacy hwcaps subdirectories (tls, haswell, x86_64, …; glibc before 2.37): auto (when the target's glibc is older than 2.37, by this CPU) or none")
	fs.StringVar(&r.Platform, "platform", "", "value of $PLATFORM (default: what ld.so sets on this CPU, e.g. haswell on Intel, x86_64 on AMD)")
}

// Options converts the flags; cmd tells whether --ld-library-path was
// given. What the resolver works around (a damaged ld.so.cache) is a
// warning on io, printed after the command's output.
func (r *ResolverFlags) Options(cmd *cobra.Command, io *IOStreams) (rpath.Options, error) {
	ro := rpath.Options{Root: r.Root, LibDirs: r.LibDirs, Platform: r.Platform, Warn: io.Warn}
	hw, ok := rpath.ParseHWCapsLevel(r.HWCaps)
	if !ok {
		return ro, &UsageError{fmt.Errorf("--hwcaps must be auto, none, x86-64-v2, x86-64-v3 or x86-64-v4, not %q", r.HWCaps)}
	}
	ro.HWCaps = hw
	switch r.LegacyHWCaps {
	case "", "auto":
	case "none":
		ro.LegacyHWCaps = []string{}
	default:
		return ro, &UsageError{fmt.Errorf("--legacy-hwcaps must be auto or none, not %q", r.LegacyHWCaps)}
	}
	switch {
	case cmd.Flags().Changed("ld-library-path"):
		ro.LDLibraryPath = strings.Split(r.LDLibraryPath, ":")
	case r.Env:
		if v, ok := os.LookupEnv("LD_LIBRARY_PATH"); ok {
			ro.LDLibraryPath = strings.Split(v, ":")
		}
	}
	return ro, nil
}

// failOn is the --fail-on flag: validated when it is set, so a bad value is
// a flag error (exit 2) before any work starts.
type failOn struct{ p *string }

func (f failOn) String() string { return *f.p }
func (f failOn) Type() string   { return "LEVEL" }
func (f failOn) Set(v string) error {
	switch v {
	case "error", "warning", "note", "never":
		*f.p = v
		return nil
	}
	return fmt.Errorf("must be error, warning, note or never, not %q", v)
}

// FailOnVar registers --fail-on (default "error") with the given usage.
func FailOnVar(fs *pflag.FlagSet, p *string, usage string) {
	*p = "error"
	fs.Var(failOn{p}, "fail-on", usage)
}

// FailOnUsage is the --fail-on help of the report commands.
const FailOnUsage = "exit 3 on findings at or above: error, warning, note or never"

// InRoot maps files named on the command line into the --root sysroot the
// way the resolver maps the paths it finds (rpath.FileInRoot): with
// --root /sys, /usr/lib/libx.so is /sys/usr/lib/libx.so.
func InRoot(root string, paths []string) []string {
	if root == "" {
		return paths
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = rpath.FileInRoot(root, p)
	}
	return out
}
