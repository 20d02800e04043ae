package root

import (
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
)

// The table a command line is looked up in names what each entry builds,
// and every command of the tree is in it: a name that drifted would make
// `rocmdoctor NAME` build the whole tree (slower, same result) or, for a
// command missing from the table, not exist at all.
func TestSubcommandTableMatchesTree(t *testing.T) {
	io, _, _, _ := cli.Test()
	seen := map[string]bool{}
	for _, sc := range subcommands(io) {
		if got := sc.build().Name(); got != sc.name {
			t.Errorf("entry %q builds %q", sc.name, got)
		}
		seen[sc.name] = true
	}
	for _, c := range NewCmdRoot(io).Commands() {
		if !seen[c.Name()] && c.Name() != "completion" && c.Name() != "help" {
			t.Errorf("command %q is not in the table", c.Name())
		}
	}
}

// A command built alone answers as in the whole tree: its help (usage,
// flags, the root's --color) and its usage errors are the same.
func TestSubcommandAloneAsInTree(t *testing.T) {
	for _, sc := range subcommands(nil) {
		for _, args := range [][]string{{sc.name, "--help"}, {sc.name, "--no-such-flag"}} {
			var outs, errs [2]string
			var codes [2]error
			for i, only := range []string{"", sc.name} {
				io, _, out, errOut := cli.Test()
				cmd := newCmdRoot(io, only)
				cmd.SetArgs(args)
				_, codes[i] = cmd.ExecuteC()
				outs[i], errs[i] = out.String(), errOut.String()
			}
			if args[1] == "--help" && outs[0] == "" && sc.name != "patchelf" && sc.name != "patch" {
				t.Errorf("%q printed no help", args)
			}
			if outs[0] != outs[1] || errs[0] != errs[1] || (codes[0] == nil) != (codes[1] == nil) {
				t.Errorf("%q: alone %q/%q/%v, in the tree %q/%q/%v", args, outs[1], errs[1], codes[1], outs[0], errs[0], codes[0])
			}
		}
	}
}
