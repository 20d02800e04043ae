/* Member of the test archives: defines a_func, needs b_func and puts. */
#include <stdio.h>
extern int b_func(int);
int a_func(int x) { puts("a"); return b_func(x) + 1; }
