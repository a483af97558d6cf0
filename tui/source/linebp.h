/*
 * Line breakpoints of a live run: "vector_add.c:47" pauses when any PE issues an op from
 * that line of its kernel, "vector_add.c:47 pe=3" when PE 3 does (pe=N: the PE numbered N
 * in any cube; pe=GLOB: the PEs whose id matches, "sip0.cube1.pe*"). A line is matched
 * against the call site each op record carries (sim/util/srcsite.h): the basename of the
 * file the kernel was compiled from and the line of its tl call. Before a breakpoint is set
 * it is checked against what the run can issue: the files its kernels called from so far,
 * or a kernel source found in the current directory or among the built-in kernels, and the
 * lines of that source that make a tl call that issues ops.
 */
#ifndef TUI_LINEBP_H
#define TUI_LINEBP_H

#include "sim/util/diag.h"

#include <stdbool.h>
#include <stdint.h>

struct tui_linebp {
    char file[128]; /* basename, "vector_add.c" */
    uint32_t line;  /* >= 1 */
    char pe[128];   /* glob over the PE id ("*.pe3" for pe=3), or "" for any PE */
};

/* Whether text has the form of a line breakpoint: NAME:LINE, then optionally pe=... (what
 * the breakpoint prompt takes for one). */
bool tui_linebp_looks(const char *text);

/* Parse "FILE:LINE [pe=N|pe=GLOB]" into bp (a path keeps its basename). Returns 0, or
 * -SIM_EINVAL with d saying what is wrong. */
int tui_linebp_parse(const char *text, struct tui_linebp *bp, struct diag *d);

/*
 * Whether bp can match in the run whose model is m, with the reason when not (-SIM_EINVAL,
 * d). A line some op of m came from can; else it cannot when it is in a file that
 * no kernel of the run called from and that is no kernel source found (the current
 * directory, the built-in kernels); a line past the file's end; a line of the source that
 * makes no tl call issuing ops (the lines that do are named); once the run is over
 * (run_over), a line no call came from. 0 when it can match.
 */
struct trace_model;
int tui_linebp_check(const struct tui_linebp *bp, const struct trace_model *m, bool run_over,
                     struct diag *d);

/* Whether an op record from call site site (a sim_srcsite id) on component (its id,
 * "sip0.cube0.pe3.pe_dma") hits bp. */
bool tui_linebp_hits(const struct tui_linebp *bp, uint32_t site, const char *component);

#endif
