/* A member whose name needs the GNU long-name table. */
int b_func(int x) { return x * 2; }
int long_named_data = 42;
