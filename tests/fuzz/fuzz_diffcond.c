/*
 * Fuzz harness for the conditions of npuscope diff --fail-if (user input): any bytes
 * either parse into conditions with finite thresholds or are refused with one line; a
 * refused list appends nothing.
 */
#include "trace/diff/diffcond.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0'; /* the command line hands NUL-terminated text */
    struct trace_diffcond *v = NULL;
    size_t n = 0;
    struct diag d;
    char line[1200];
    if (trace_diffcond_parse(s, &v, &n, &d) < 0) {
        if (n || strchr(diag_format(&d, line, sizeof(line)), '\n'))
            abort();
    } else {
        for (size_t i = 0; i < n; i++)
            if (!isfinite(v[i].threshold) || strlen(v[i].text) > TRACE_DIFFCOND_MAX)
                abort();
    }
    free(v);
    free(s);
    return 0;
}
