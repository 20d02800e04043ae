// A shared library with an executable GNU_STACK and a TEXTREL.
	.text
	.globl ptr_in_text
ptr_in_text:
	.quad ext_data
	.section .note.GNU-stack,"x",@progbits
