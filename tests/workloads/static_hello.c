/* static_hello: a statically linked program, which LD_PRELOAD cannot reach;
 * the launcher must refuse it. */
#include <stdio.h>

int main(void) {
  puts("static hello");
  return 0;
}
