/* hello: an executable using libfoo through a DT_RPATH. */
#include <stdio.h>
extern int foo_api(void);
extern double foo_sqrt(double);
int main(void) { printf("%d %.1f\n", foo_api(), foo_sqrt(4.0)); return 0; }
