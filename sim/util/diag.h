/*
 * Diagnostics for recoverable failures (I/O, parse, validation, usage). A function that can
 * fail returns 0 or a negative code and fills an optional caller-provided struct diag; the
 * caller decides how to show it. The one-line form is "FILE:LINE:COL: MESSAGE" (or
 * "FILE: PATH: MESSAGE" for JSON paths), the shape every error of npuscope takes.
 */
#ifndef SIM_DIAG_H
#define SIM_DIAG_H

#include <stddef.h>

enum {
    SIM_DIAG_FILE_MAX = 512,
    SIM_DIAG_PATH_MAX = 256,
    SIM_DIAG_MSG_MAX = 512,
};

/* Error codes shared by all layers (returned negated). */
enum sim_err {
    SIM_OK = 0,
    SIM_EIO = 1,    /* reading or writing a file failed */
    SIM_EPARSE = 2, /* syntax error in a file */
    SIM_EINVAL = 3, /* well-formed but invalid content */
    SIM_ENOENT = 4, /* a named thing does not exist */
    SIM_ENOMEM = 5, /* a bounded allocation was refused (not malloc failure) */
    SIM_ELIMIT = 6, /* a safety limit was hit (nesting depth, size) */
    SIM_ESTATE = 7, /* the operation is not allowed in the current state */
};

struct diag {
    char file[SIM_DIAG_FILE_MAX]; /* file the problem is in, or "" */
    int line;                     /* 1-based, or 0 when unknown */
    int col;                      /* 1-based, or 0 when unknown */
    char path[SIM_DIAG_PATH_MAX]; /* JSON path or config key, or "" */
    char msg[SIM_DIAG_MSG_MAX];   /* what is wrong, no trailing newline */
};

/* Clear d (no-op when d is NULL). */
void diag_clear(struct diag *d);

/*
 * Fill d (no-op when d is NULL): file may be NULL, line/col 0 when unknown, path NULL when
 * none. Returns -code, so callers can write "return diag_set(d, SIM_EINVAL, ...)".
 */
int diag_set(struct diag *d, enum sim_err code, const char *file, int line, int col,
             const char *path, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

/* Prefix d->msg with "PREFIX: " (for callers adding context). */
void diag_prefix(struct diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Format d as one line into buf: "file:line:col: key 'path': msg" with absent parts left
 * out. Control characters in any part are escaped. Returns buf.
 */
char *diag_format(const struct diag *d, char *buf, size_t size);

#endif
