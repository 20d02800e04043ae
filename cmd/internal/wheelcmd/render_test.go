package wheelcmd

import (
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/wheel"
)

// The plain-text plan says what each note says (a copy that shadows the
// target, a replaced copy's version), leaves the RUNPATH of copies that
// are not rewritten unmentioned, says when a DT_RPATH becomes a
// DT_RUNPATH, and names what is dropped.
func TestRenderNotes(t *testing.T) {
	p := &wheel.Plan{Input: "torch.whl", Kind: "wheel", TargetDirs: []string{"/opt/rocm/lib"}, Files: []wheel.FilePlan{
		{Path: "torch/lib/libtorch_hip.so", OldRunPath: "$ORIGIN", NewRunPath: "$ORIGIN:/opt/rocm/lib", Needed: []wheel.Need{
			{Name: "libamdhip64.so", Class: wheel.Bundled, Replacement: "libamdhip64.so.6", Note: "the bundled copy's SONAME has no version; the target has libamdhip64.so.6"},
			{Name: "libc10.so", Class: wheel.InWheel, Resolved: "torch/lib/libc10.so"},
		}},
		{Path: "torch/lib/libMIOpen.so", Bundled: true, OldRunPath: "$ORIGIN", NewRunPath: "/opt/rocm/lib", Needed: []wheel.Need{
			{Name: "libamdhip64.so", Class: wheel.InWheel, Resolved: "torch/lib/libamdhip64.so", Note: "a copy of /opt/rocm/lib/libamdhip64.so.6 from the target, which it shadows (--replace-bundled replaces it)"},
		}},
		{Path: "torch/lib/libold.so", OldIsRPath: true, OldRunPath: "/opt/rocm-6.0/lib", NewRunPath: "/opt/rocm/lib"},
		{Path: "torch/lib/libsame.so", OldIsRPath: true, OldRunPath: "/opt/rocm/lib", NewRunPath: "/opt/rocm/lib"},
	}, Drop: []string{"torch/lib/libamdhip64.so"}}
	io, _, out, _ := cli.Test()
	render(io, p)
	got := out.String()
	for _, want := range []string{
		"torch/lib/libtorch_hip.so: libamdhip64.so: the bundled copy's SONAME has no version; the target has libamdhip64.so.6\n",
		"torch/lib/libMIOpen.so: libamdhip64.so: a copy of /opt/rocm/lib/libamdhip64.so.6 from the target, which it shadows (--replace-bundled replaces it)\n",
		"torch/lib/libtorch_hip.so: RUNPATH \"$ORIGIN\" → \"$ORIGIN:/opt/rocm/lib\"\n",
		"drop torch/lib/libamdhip64.so (a copy of a target library, no longer referenced)\n",
		"torch/lib/libold.so: RPATH \"/opt/rocm-6.0/lib\" → RUNPATH \"/opt/rocm/lib\"\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "libMIOpen.so: RUNPATH") || strings.Contains(got, "libc10.so: ") || strings.Contains(got, "libsame.so") {
		t.Errorf("a RUNPATH line for a copy, or a note where there is none:\n%s", got)
	}
}
