package wheel_test

import (
	"context"
	"fmt"

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
