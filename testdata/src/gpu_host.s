// A host library carrying an offload bundle in .hip_fatbin, the way hipcc does.
	.section .hip_fatbin,"a",@progbits
	.p2align 12
	.globl __hip_fatbin
__hip_fatbin:
	.incbin "bundle.hipfb"
	.text
	.globl gpu_host_entry
gpu_host_entry:
	ret
	.section .note.GNU-stack,"",@progbits
