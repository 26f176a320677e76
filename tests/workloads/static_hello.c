/* static_hello: a statically linked program, which LD_PRELOAD cannot reach
 * (the launcher watches such a program from outside). */
#include <stdio.h>

int main(void) {
  puts("static hello");
  return 0;
}
