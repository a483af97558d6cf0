/*
 * Whole reads at an offset: pread until the n bytes are in, through interruptions and short
 * reads (a file on a network file system, a signal), or the file ends or fails first.
 */
#ifndef SIM_FILEIO_H
#define SIM_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The n bytes of fd at offset off into buf; false when the file ends before them or a read
 * fails (buf then holds what was read). */
bool sim_pread_all(int fd, void *buf, size_t n, uint64_t off);

#endif
