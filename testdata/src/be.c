/* Compiled for a big-endian target (powerpc64) by gen.sh. */
int be_value = 0x01020304;
int be_func(int x) { return x + be_value; }
