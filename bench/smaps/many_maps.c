/* A process with many separate mappings, for the smaps benchmark.
 *
 * many_maps [N]   maps N one-page anonymous regions (default 20000) at
 * adjacent addresses with alternating protections (rw- / r--), so the
 * kernel cannot merge neighbours into one VMA; writes to every other
 * writable page so some regions are resident and dirty; prints its PID and
 * the number of regions on stdout; then sleeps until killed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
    long page = sysconf(_SC_PAGESIZE);
    /* Reserve one span, then replace it page by page: adjacent VMAs that
     * differ in protection stay separate. */
    char *base = mmap(NULL, (size_t)n * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) { perror("mmap reserve"); return 1; }
    for (long i = 0; i < n; i++) {
        char *p = base + i * page;
        int prot = (i % 2 == 0) ? PROT_READ | PROT_WRITE : PROT_READ;
        if (mmap(p, page, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
            perror("mmap page");
            return 1;
        }
        if (i % 4 == 0) p[0] = (char)i; /* every other writable page is dirty */
    }
    printf("%d %ld\n", (int)getpid(), n);
    fflush(stdout);
    for (;;) pause();
}
