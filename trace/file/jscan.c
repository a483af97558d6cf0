/*
 * The loader's iterative JSON scanner: it checks a value's syntax and finds its end without
 * recursion, to name the precise position of a syntax error cJSON only refuses, and to tell
 * a well-formed value too deep for cJSON from bad JSON. It reads the bytes it is given and
 * allocates only its container stack (one byte per level).
 */
#include "trace/file/jscan.h"

#include "sim/util/xalloc.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t trace_jscan_ws(const char *p, size_t n, size_t i)
{
    while (i < n) {
        char c = p[i];
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
            break;
        i++;
    }
    return i;
}

int trace_jscan_string(const struct trace_jscan *L, size_t i, size_t *out,
                       struct trace_jscan_err *e)
{
    const char *p = L->p;
    for (i++;;) {
        const char *q = memchr(p + i, '"', L->n - i);
        size_t stop = q ? (size_t)(q - p) : L->n;
        const char *bs = memchr(p + i, '\\', stop - i);
        if (!bs) {
            if (!q) {
                e->pos = L->n, e->msg = "unterminated string";
                return -1;
            }
            *out = stop + 1;
            return 0;
        }
        i = (size_t)(bs - p);
        if (i + 1 >= L->n) {
            e->pos = L->n, e->msg = "unterminated string";
            return -1;
        }
        char c = p[i + 1];
        if (c == 'u') {
            for (int k = 2; k < 6; k++) {
                if (i + (size_t)k >= L->n || !strchr("0123456789abcdefABCDEF", p[i + (size_t)k]) ||
                    !p[i + (size_t)k]) {
                    e->pos = i, e->msg = "invalid \\u escape in a string";
                    return -1;
                }
            }
            i += 6;
        } else if (c && strchr("\"\\/bfnrt", c)) {
            i += 2;
        } else {
            e->pos = i, e->msg = "invalid escape in a string";
            return -1;
        }
    }
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int scan_number(const struct trace_jscan *L, size_t i, size_t *out,
                       struct trace_jscan_err *e)
{
    const char *p = L->p;
    size_t n = L->n, s = i;
    if (i < n && p[i] == '-')
        i++;
    if (i < n && p[i] == '0') {
        i++;
    } else if (i < n && is_digit(p[i])) {
        while (i < n && is_digit(p[i]))
            i++;
    } else {
        goto bad;
    }
    if (i < n && p[i] == '.') {
        if (++i >= n || !is_digit(p[i]))
            goto bad;
        while (i < n && is_digit(p[i]))
            i++;
    }
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-'))
            i++;
        if (i >= n || !is_digit(p[i]))
            goto bad;
        while (i < n && is_digit(p[i]))
            i++;
    }
    *out = i;
    return 0;
bad:
    e->pos = s, e->msg = "invalid number";
    return -1;
}

static int push(struct trace_jscan *L, size_t depth, unsigned char c)
{
    if (depth == L->cap) {
        L->cap = L->cap ? L->cap * 2 : 256;
        L->stack = sim_xrealloc(L->stack, L->cap);
    }
    L->stack[depth] = c;
    return 0;
}

/* A member key and its colon, at i (after whitespace). */
static int scan_key(const struct trace_jscan *L, size_t i, size_t *out, struct trace_jscan_err *e)
{
    i = trace_jscan_ws(L->p, L->n, i);
    if (i >= L->n || L->p[i] != '"') {
        e->pos = i, e->msg = i >= L->n ? "unexpected end of file" : "expected a member name";
        return -1;
    }
    if (trace_jscan_string(L, i, &i, e) < 0)
        return -1;
    i = trace_jscan_ws(L->p, L->n, i);
    if (i >= L->n || L->p[i] != ':') {
        e->pos = i, e->msg = "expected ':' after a member name";
        return -1;
    }
    *out = i + 1;
    return 0;
}

/* Without recursion or allocation per level beyond one byte of stack. */
int trace_jscan_value(struct trace_jscan *L, size_t i, size_t *out, struct trace_jscan_err *e)
{
    const char *p = L->p;
    size_t depth = 0;
    e->depth = 0;
    for (;;) {
        /* a value */
        i = trace_jscan_ws(L->p, L->n, i);
        if (i >= L->n) {
            e->pos = i, e->msg = "unexpected end of file";
            return -1;
        }
        char c = p[i];
        if (c == '{' || c == '[') {
            push(L, depth++, (unsigned char)c);
            if (depth > e->depth)
                e->depth = depth;
            i = trace_jscan_ws(L->p, L->n, i + 1);
            if (i < L->n && p[i] == (c == '{' ? '}' : ']')) {
                depth--, i++;
            } else {
                if (c == '{' && scan_key(L, i, &i, e) < 0)
                    return -1;
                continue;
            }
        } else if (c == '"') {
            if (trace_jscan_string(L, i, &i, e) < 0)
                return -1;
        } else if (c == '-' || is_digit(c)) {
            if (scan_number(L, i, &i, e) < 0)
                return -1;
        } else if (L->n - i >= 4 &&
                   (memcmp(p + i, "true", 4) == 0 || memcmp(p + i, "null", 4) == 0)) {
            i += 4;
        } else if (L->n - i >= 5 && memcmp(p + i, "false", 5) == 0) {
            i += 5;
        } else {
            e->pos = i, e->msg = "expected a value";
            return -1;
        }
        /* after a value: close containers or go on to the next member */
        for (;;) {
            if (depth == 0) {
                *out = i;
                return 0;
            }
            i = trace_jscan_ws(L->p, L->n, i);
            char top = (char)L->stack[depth - 1];
            if (i < L->n && p[i] == ',') {
                i++;
                if (top == '{' && scan_key(L, i, &i, e) < 0)
                    return -1;
                break;
            }
            if (i < L->n && p[i] == (top == '{' ? '}' : ']')) {
                depth--, i++;
                continue;
            }
            e->pos = i;
            e->msg = i >= L->n    ? "unexpected end of file"
                     : top == '{' ? "expected ',' or '}'"
                                  : "expected ',' or ']'";
            return -1;
        }
    }
}

void trace_jscan_free(struct trace_jscan *s)
{
    free(s->stack);
    s->stack = NULL, s->cap = 0;
}

void trace_jscan_position(const char *p, size_t off, int *line, int *col)
{
    size_t ln = 1, start = 0;
    for (const char *q = p, *e = p + off; q < e;) {
        const char *nl = memchr(q, '\n', (size_t)(e - q));
        if (!nl)
            break;
        ln++;
        start = (size_t)(nl - p) + 1;
        q = nl + 1;
    }
    *line = ln > INT32_MAX ? INT32_MAX : (int)ln;
    size_t c = off - start + 1;
    *col = c > INT32_MAX ? INT32_MAX : (int)c;
}

const char *trace_jscan_found(const char *p, size_t n, size_t off, char *buf, size_t size)
{
    if (off >= n)
        snprintf(buf, size, "the end of the file");
    else if ((unsigned char)p[off] >= 0x20 && (unsigned char)p[off] < 0x7F)
        snprintf(buf, size, "'%c'", p[off]);
    else
        snprintf(buf, size, "byte 0x%02x", (unsigned char)p[off]);
    return buf;
}
