/* A process that does nothing but exist: the many-process workload of
 * bench/top/scale.sh and bench/snapshot/run.sh. It touches a page of
 * heap (so its rollup has some anonymous memory) and waits for a signal. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void) {
    char *p = malloc(4096);
    if (p) memset(p, 1, 4096);
    for (;;) pause();
}
