/* Whole reads at an offset (see fileio.h). */
#include "sim/util/fileio.h"

#include <errno.h>
#include <sys/types.h>
#include <unistd.h>

bool sim_pread_all(int fd, void *buf, size_t n, uint64_t off)
{
    char *b = buf;
    for (size_t done = 0; done < n;) {
        ssize_t k = pread(fd, b + done, n - done, (off_t)(off + done));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        done += (size_t)k;
    }
    return true;
}
