package prefixcmd

import (
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/prefix"
)

// Two closures can load the same two runtimes in opposite orders; each
// winner line names its closure, or the lines contradict each other.
func TestRenderNamesTheClosureOfEachWinner(t *testing.T) {
	rep := &prefix.Report{Prefix: "/usr", Providers: []prefix.RuntimeCopies{
		{Kind: "unwinder", Winner: "/l/libunwind.so.8", Others: []string{"/l/libgcc_s.so.1"}, Closure: "/l/a.so"},
		{Kind: "unwinder", Winner: "/l/libgcc_s.so.1", Others: []string{"/l/libunwind.so.8"}, Closure: "/l/b.so"},
	}}
	io, _, out, _ := cli.Test()
	render(io, rep)
	for _, want := range []string{
		"unwinder in the closure of /l/a.so: /l/libunwind.so.8 wins over /l/libgcc_s.so.1\n",
		"unwinder in the closure of /l/b.so: /l/libgcc_s.so.1 wins over /l/libunwind.so.8\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}
