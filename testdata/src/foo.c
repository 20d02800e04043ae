/* libfoo: a shared library with versioned symbols (see foo.map). */
#include <math.h>

int foo_counter;

double foo_sqrt(double x) { return sqrt(x); }

/* foo_old is kept for binaries linked against FOO_1 (hidden, "@"),
 * foo_new is the default ("@@") FOO_2 implementation. */
int foo_old(void) { return 1; }
int foo_new(void) { return 2; }
__asm__(".symver foo_old,foo_api@FOO_1");
__asm__(".symver foo_new,foo_api@@FOO_2");

__attribute__((weak)) extern void optional_hook(void);
void foo_call_hook(void) { if (optional_hook) optional_hook(); }
