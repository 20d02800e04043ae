package check_test

import (
	"context"
	"fmt"

	"github.com/rocmdoctor/rocmdoctor/check"
)

// The gate over one file: each finding has a rule ID, a severity and a fix.
func ExampleRun() {
	rep, err := check.Run(context.Background(), []string{"../testdata/libexecstack.so"}, check.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range rep.Findings {
		fmt.Println(f.ID, f.Severity, f.Rule)
	}
	// Output:
	// RD1001 error undefined-symbol
	// RD1206 error executable-stack
	// RD1207 warning textrel
}
