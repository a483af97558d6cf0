/* Line breakpoints (tui/source/linebp.c): what the prompt takes for one, the parse, the
 * match against an op record's call site, and the check of a line against a kernel's
 * source. */
#include "sim/util/srcsite.h"
#include "trace/model/model.h"
#include "tui/source/linebp.h"

#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

Test(linebp, what_the_prompt_takes_for_a_line)
{
    cr_assert(tui_linebp_looks("vector_add.c:47"));
    cr_assert(tui_linebp_looks("  sim/kernels/vector_add.c:47 pe=3"));
    cr_assert_not(tui_linebp_looks("sip0.cube0.pe0.pe_dma"));
    cr_assert_not(tui_linebp_looks("hbm.util > 0.9"));
    cr_assert_not(tui_linebp_looks("vector_add.c:"));
    cr_assert_not(tui_linebp_looks(":47"));
    cr_assert_not(tui_linebp_looks("a.c:4x"));
}

Test(linebp, parse)
{
    struct tui_linebp bp;
    struct diag d;
    cr_assert_eq(tui_linebp_parse("sim/kernels/vector_add.c:47", &bp, &d), 0, "%s", d.msg);
    cr_assert_str_eq(bp.file, "vector_add.c");
    cr_assert_eq(bp.line, 47);
    cr_assert_str_eq(bp.pe, "");
    cr_assert_eq(tui_linebp_parse("vector_add.c:47 pe=3", &bp, &d), 0, "%s", d.msg);
    cr_assert_str_eq(bp.pe, "*.pe3");
    cr_assert_eq(tui_linebp_parse("vector_add.c:47 pe=sip0.cube1.pe*", &bp, &d), 0, "%s", d.msg);
    cr_assert_str_eq(bp.pe, "sip0.cube1.pe*");
    cr_assert_lt(tui_linebp_parse("vector_add.c:0", &bp, &d), 0);
    cr_assert_lt(tui_linebp_parse("vector_add.c:47 pe=", &bp, &d), 0);
    cr_assert_lt(tui_linebp_parse("vector_add.c:47 cube=1", &bp, &d), 0);
    cr_assert(strstr(d.msg, "only pe=N"), "%s", d.msg);
    cr_assert_lt(tui_linebp_parse("vector_add.c:47 pe=1 x", &bp, &d), 0);
}

Test(linebp, an_op_hits_by_its_call_site_and_pe)
{
    struct tui_linebp bp;
    struct diag d;
    cr_assert_eq(tui_linebp_parse("mykern.c:12 pe=3", &bp, &d), 0);
    uint32_t at12 = sim_srcsite_intern("/src/k/mykern.c", "mykern", 12);
    uint32_t at13 = sim_srcsite_intern("/src/k/mykern.c", "mykern", 13);
    cr_assert(tui_linebp_hits(&bp, at12, "sip0.cube1.pe3.pe_dma"));
    cr_assert_not(tui_linebp_hits(&bp, at12, "sip0.cube1.pe2.pe_dma"), "another PE");
    cr_assert_not(tui_linebp_hits(&bp, at13, "sip0.cube1.pe3.pe_dma"), "another line");
    cr_assert_not(tui_linebp_hits(&bp, 0, "sip0.cube1.pe3.pe_dma"), "no call site");
    cr_assert_eq(tui_linebp_parse("mykern.c:12", &bp, &d), 0);
    cr_assert(tui_linebp_hits(&bp, at12, "sip0.cube0.pe0.pe_math"), "any PE");
}

Test(linebp, a_line_checked_against_the_source_and_the_ops_seen)
{
    /* tests/data/traces/mykern.c: line 3 loads, 4 multiplies, 5 stores */
    cr_assert_eq(chdir("tests/data/traces"), 0);
    struct trace_model *m = trace_model_new();
    struct tui_linebp bp;
    struct diag d;
    cr_assert_eq(tui_linebp_parse("mykern.c:4", &bp, &d), 0);
    cr_assert_eq(tui_linebp_check(&bp, m, false, &d), 0, "%s", d.msg);
    cr_assert_eq(tui_linebp_parse("mykern.c:2", &bp, &d), 0);
    cr_assert_lt(tui_linebp_check(&bp, m, false, &d), 0);
    cr_assert(strstr(d.msg, "line 2 of mykern.c makes no tl call that issues ops (lines that "
                            "do: 3, 4, 5)"),
              "%s", d.msg);
    cr_assert_eq(tui_linebp_parse("mykern.c:60", &bp, &d), 0);
    cr_assert_lt(tui_linebp_check(&bp, m, false, &d), 0);
    cr_assert(strstr(d.msg, "mykern.c has 6 lines: there is no line 60"), "%s", d.msg);
    cr_assert_eq(tui_linebp_parse("nosuch.c:3", &bp, &d), 0);
    cr_assert_lt(tui_linebp_check(&bp, m, false, &d), 0);
    cr_assert(strstr(d.msg, "nosuch.c is not a kernel source of this run"), "%s", d.msg);
    /* once the run is over, a line no op came from cannot match any more */
    cr_assert_eq(tui_linebp_parse("mykern.c:4", &bp, &d), 0);
    cr_assert_lt(tui_linebp_check(&bp, m, true, &d), 0);
    cr_assert(strstr(d.msg, "the run is over and no call came from mykern.c:4"), "%s", d.msg);
    /* an op from a line the text does not show as a call: the op wins */
    uint32_t f = trace_model_intern(m, "mykern.c", 8);
    trace_model_site(m, f, TRACE_NO_STR, 2);
    cr_assert_eq(tui_linebp_parse("mykern.c:2", &bp, &d), 0);
    cr_assert_eq(tui_linebp_check(&bp, m, true, &d), 0, "%s", d.msg);
    trace_model_free(m);
}
