/*
 * The median of a benchmark's runs (the machine is noisy: every figure is a median).
 */
#ifndef BENCH_MEDIAN_H
#define BENCH_MEDIAN_H

#include <stddef.h>
#include <stdlib.h>

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n) (n > 0; v is sorted in place): the upper one of an even count. */
static inline double bench_median(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), bench_cmp_double);
    return v[n / 2];
}

#endif
