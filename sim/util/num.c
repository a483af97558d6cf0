/*
 * Checked numbers from text (see num.h).
 */
#include "sim/util/num.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

bool sim_take_unsigned(const char **s, int base, unsigned long long max, unsigned long long *v)
{
    const char *at = *s + strspn(*s, " \t\n");
    if (*at == '-' || *at == '+') /* (strtoull would take a sign, and wrap a minus) */
        return false;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(at, &end, base);
    if (end == at || errno || x > max)
        return false;
    *s = end, *v = x;
    return true;
}

bool sim_take_int(const char **s, int *v)
{
    char *end;
    errno = 0;
    long x = strtol(*s, &end, 10);
    if (end == *s || errno || x < INT_MIN || x > INT_MAX)
        return false;
    *s = end, *v = (int)x;
    return true;
}
