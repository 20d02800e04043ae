package wheel_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rocmdoctor/rocmdoctor/wheel"
)

// Plan the relink of a vendor wheel at a local ROCm without writing
// anything: each native library, what each NEEDED entry becomes, and the
// new RUNPATH (the fixture's one library needs nothing from the target,
// so its RUNPATH is left as it is).
func ExampleRelink() {
	plan, err := wheel.Relink(context.Background(), "../testdata/checktree/share/wheels/onnxruntime_rocm-1.18.0-cp311-cp311-linux_x86_64.whl",
		wheel.Options{DryRun: true, LibDirs: []string{"../testdata/checktree/lib"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range plan.Files {
		fmt.Println(f.Path)
		for _, n := range f.Needed {
			fmt.Printf("  %s: %s\n", n.Name, n.Class)
		}
		fmt.Println("  runpath:", f.OldRunPath, "->", f.NewRunPath)
	}
	// Output:
	// onnxruntime/capi/libonnxruntime_providers_shared.so
	//   runpath: $ORIGIN/../../rocm/lib -> $ORIGIN/../../rocm/lib
}

// Plan a relink, look at it, then apply it: nothing is written into the
// output directory before Apply, and a plan that is not applied is
// closed.
func ExamplePlanRelink() {
	out, _ := os.MkdirTemp("", "relinked")
	defer os.RemoveAll(out)
	plan, err := wheel.PlanRelink(context.Background(), "../testdata/checktree/share/wheels/onnxruntime_rocm-1.18.0-cp311-cp311-linux_x86_64.whl",
		wheel.Options{DryRun: true, LibDirs: []string{"../testdata/checktree/lib"}, Output: out})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer plan.Close()
	fmt.Println(len(plan.Files), "library, written:", plan.Written)
	if err := plan.Apply(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("written:", plan.Written, filepath.Base(plan.Output))
	// Output:
	// 1 library, written: false
	// written: true onnxruntime_rocm-1.18.0-cp311-cp311-linux_x86_64.whl
}
