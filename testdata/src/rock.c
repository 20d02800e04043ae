/* The seed case (DOMAIN §1): rocMLIR's librockCompiler.a initialises the
 * LLVM targets it was built for. Built for AMDGPU;X86, it calls the X86
 * initialisers too, but its dependency list only names LLVMAMDGPU*. */
void LLVMInitializeAMDGPUTargetInfo(void);
void LLVMInitializeAMDGPUTarget(void);
void LLVMInitializeAMDGPUTargetMC(void);
void LLVMInitializeX86TargetInfo(void);
void LLVMInitializeX86Target(void);
void LLVMInitializeX86TargetMC(void);
void LLVMInitializeX86AsmPrinter(void);
void LLVMInitializeX86AsmParser(void);

void rock_init_targets(void) {
  LLVMInitializeAMDGPUTargetInfo();
  LLVMInitializeAMDGPUTarget();
  LLVMInitializeAMDGPUTargetMC();
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
  LLVMInitializeX86AsmParser();
}
