/*
 * The source text of a kernel file named in a trace's call sites (details.src gives only
 * the basename): found next to the trace, in the current directory, or among the built-in
 * kernels' sources compiled into the binary (sim/util/embedded.h), split into lines. The
 * text is raw: escape it before it reaches a terminal.
 */
#ifndef TRACE_SRCTEXT_H
#define TRACE_SRCTEXT_H

#include <stddef.h>

struct trace_srctext {
    char *data;         /* owned: the file's bytes, NUL-terminated */
    size_t size;        /* bytes */
    const char **lines; /* owned array: line i (0-based) starts at lines[i] */
    size_t *len;        /* owned: its length without the newline (and a '\r') */
    size_t nlines;
    char *origin; /* owned: where it was found ("./gemm.c", "built-in sim/kernels/gemm.c") */
};

/* Files larger than this are not read. */
#define TRACE_SRCTEXT_MAX (16u << 20)

/*
 * The file base (a basename: a name with a '/' or "." / ".." is refused) looked up in
 * trace_dir (may be NULL), then the current directory, then the embedded kernels'
 * sources. NULL when none has it (or it is too large).
 */
struct trace_srctext *trace_srctext_find(const char *base, const char *trace_dir);

void trace_srctext_free(struct trace_srctext *t);

/* Line n (1-based) of t with tabs as spaces, into buf (size bytes, NUL-terminated), raw;
 * NULL when n is past the end of the file (or 0). */
const char *trace_srctext_line(const struct trace_srctext *t, size_t n, char *buf, size_t size);

#endif
