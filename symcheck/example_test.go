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

// The gate over one file: each finding has a rule ID, a severity and a fix.
func ExampleCheck() {
	rep, err := symcheck.Check(context.Background(), []string{"../testdata/libexecstack.so"}, symcheck.CheckOptions{})
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
