/*
 * The loader's iterative JSON scanner (see jscan.c): syntax checking of one value with the
 * position and a one-line reason of its first error.
 */
#ifndef TRACE_JSCAN_H
#define TRACE_JSCAN_H

#include <stddef.h>

/* The bytes scanned (borrowed) and the container stack (owned: trace_jscan_free). */
struct trace_jscan {
    const char *p;
    size_t n;
    unsigned char *stack;
    size_t cap;
};

/* Where and why a scan stopped. */
struct trace_jscan_err {
    size_t pos;      /* the offending byte's offset (n: the end of the bytes) */
    const char *msg; /* static text, e.g. "expected ',' or '}'" */
    size_t depth;    /* trace_jscan_value: the deepest nesting seen */
};

/* The first offset at or after i that is not JSON whitespace (n if none). */
size_t trace_jscan_ws(const char *p, size_t n, size_t i);

/* Check the string whose opening quote is at i. Returns 0 with *out past its closing quote,
 * or -1 with e filled. */
int trace_jscan_string(const struct trace_jscan *s, size_t i, size_t *out,
                       struct trace_jscan_err *e);

/* Check the JSON value at i (after optional whitespace). Returns 0 with *out past it, or -1
 * with e filled; e->depth is the deepest nesting seen either way. */
int trace_jscan_value(struct trace_jscan *s, size_t i, size_t *out, struct trace_jscan_err *e);

/* Line and column (1-based, in bytes) of offset off of p (off within its bytes). */
void trace_jscan_position(const char *p, size_t off, int *line, int *col);

/* The byte at off of p[0, n) for a "found ..." message, into buf (size bytes): 'x', byte
 * 0x.., or the end of the file. Returns buf. */
const char *trace_jscan_found(const char *p, size_t n, size_t off, char *buf, size_t size);

/* Free the scanner's stack. */
void trace_jscan_free(struct trace_jscan *s);

#endif
