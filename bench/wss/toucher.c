/* The bench's child: maps and writes TOTAL bytes of private anonymous
 * memory (no transparent huge pages), then touches one byte of each page
 * of the first HOT bytes every millisecond, until killed. Prints
 * "PID\n" when its memory is written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (argc < 3) return 2;
    size_t total = strtoull(argv[1], 0, 10), hot = strtoull(argv[2], 0, 10);
    char *p = mmap(0, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    madvise(p, total, MADV_NOHUGEPAGE);
    memset(p, 0x5a, total);
    printf("%d\n", (int)getpid());
    fflush(stdout);
    struct timespec ms = {0, 1000000};
    for (;;) {
        for (size_t i = 0; i < hot; i += 4096) p[i]++;
        nanosleep(&ms, 0);
    }
}
