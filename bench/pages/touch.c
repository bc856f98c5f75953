/* The benchmark's workload: writes LEN bytes of private anonymous memory
   (every page), says "ready", and sleeps until killed. With a second
   argument "thp" the mapping is 2 MiB-aligned and marked MADV_HUGEPAGE,
   so the kernel backs it with transparent huge pages where it can. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv) {
    size_t len = strtoull(argv[1], 0, 10);
    int thp = argc > 2 && !strcmp(argv[2], "thp");
    size_t huge = 2 << 20, extra = thp ? huge : 0;
    char *p = mmap(0, len + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    if (thp) {
        p = (char *)(((unsigned long)p + huge - 1) & ~(huge - 1));
        if (madvise(p, len, MADV_HUGEPAGE)) return 1;
    }
    memset(p, 0x5a, len);
    if (write(1, "ready\n", 6) != 6) return 1;
    for (;;) pause();
}
