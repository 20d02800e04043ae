// Device code for the libraries' GPU targets (the offload bundle gen.sh made).
	.section .hip_fatbin,"a",@progbits
	.p2align 12
	.incbin "bundle.hipfb"
	.section .note.GNU-stack,"",@progbits
