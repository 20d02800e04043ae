/* One LLVMInitialize<Target><Component> definition; gen.sh compiles it with
 * -DNAME=... into the fake LLVM archives under testdata/llvm/lib. */
void NAME(void) {}
