package symcheck_test

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

// The undefined LLVMInitialize* symbols of the fixture libMIOpen.so, and
// the archives of a build tree that define them.
func ExampleSymbols() {
	rep, err := symcheck.Symbols(context.Background(), []string{"../testdata/libMIOpen.so"},
		symcheck.SymbolsOptions{IndexDirs: []string{"../testdata/llvm"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range rep.Findings {
		if f.Rule == finding.RuleUndefinedSymbol {
			fmt.Println(f.Symbol, "defined in", filepath.Base(f.Providers[0].File), f.Providers[0].Member)
		}
	}
	// Output:
	// LLVMInitializeX86TargetInfo defined in libLLVMX86Info.a X86_TargetInfo.o
	// LLVMInitializeX86Target defined in libLLVMX86CodeGen.a X86_Target.o
	// LLVMInitializeX86AsmParser defined in libLLVMX86AsmParser.a X86_AsmParser.o
	// LLVMInitializeX86AsmPrinter defined in libLLVMX86CodeGen.a X86_AsmPrinter.o
	// LLVMInitializeX86TargetMC defined in libLLVMX86Desc.a X86_TargetMC.o
}
