// A minimal amdgcn kernel in code object v2, the format of LLVM before 7
// and of the HSA runtime's finalizer: gen.sh assembles it for gfx803 and
// clears e_flags, as those left them (EF_AMDGPU_MACH_NONE), so that the
// ISA is named only by the NT_AMD_HSA_ISA_VERSION note.
	.hsa_code_object_version 2,1
	.hsa_code_object_isa 8,0,3,"AMD","AMDGPU"
	.text
	.globl	k
	.p2align	8
	.type	k,@function
	.amdgpu_hsa_kernel k
k:
	s_endpgm
