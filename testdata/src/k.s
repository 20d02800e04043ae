// A minimal amdgcn kernel: assembled for several GPU targets by gen.sh.
	.text
	.globl	k
	.p2align	8
	.type	k,@function
k:
	s_endpgm
.Lfunc_end0:
	.size	k, .Lfunc_end0-k
	.rodata
	.p2align	6
	.amdhsa_kernel k
		.amdhsa_next_free_vgpr 1
		.amdhsa_next_free_sgpr 1
	.end_amdhsa_kernel
