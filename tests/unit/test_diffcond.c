/* The conditions of npuscope diff --fail-if (trace/diff/diffcond.h): every form of value, lists,
 * a parser that takes any bytes and says what is wrong in one line, and evaluation. */
#include "trace/diff/diff.h"
#include "trace/diff/diffcond.h"

#include "test_diff_util.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct trace_diffcond parse1(const char *s)
{
    struct trace_diffcond *v = NULL;
    size_t n = 0;
    struct diag d;
    cr_assert_eq(trace_diffcond_parse(s, &v, &n, &d), 0, "%s: %s", s, d.msg);
    cr_assert_eq(n, 1);
    struct trace_diffcond c = v[0];
    free(v);
    return c;
}

Test(diffcond, every_form_of_value)
{
    struct trace_diffcond c = parse1("cycles>+5%");
    cr_assert_eq(c.metric, TRACE_DIFFCOND_CYCLES);
    cr_assert_eq(c.cmp, TRACE_DIFFCOND_GT);
    cr_assert_eq(c.unit, TRACE_DIFFCOND_PERCENT);
    cr_assert_float_eq(c.threshold, 5, 1e-12);
    c = parse1("  te.busy <  -10.5%  ");
    cr_assert_eq(c.metric, TRACE_DIFFCOND_BUSY);
    cr_assert_eq(c.engine, TRACE_ENGINE_TE);
    cr_assert_eq(c.cmp, TRACE_DIFFCOND_LT);
    cr_assert_float_eq(c.threshold, -10.5, 1e-12);
    cr_assert_str_eq(c.text, "te.busy <  -10.5%");
    c = parse1("cycles>=1.05x");
    cr_assert_eq(c.cmp, TRACE_DIFFCOND_GE);
    cr_assert_eq(c.unit, TRACE_DIFFCOND_RATIO);
    cr_assert_float_eq(c.threshold, 1.05, 1e-12);
    c = parse1("DMA.Util<=+0.05");
    cr_assert_eq(c.metric, TRACE_DIFFCOND_UTIL);
    cr_assert_eq(c.engine, TRACE_ENGINE_DMA);
    cr_assert_eq(c.cmp, TRACE_DIFFCOND_LE);
    cr_assert_eq(c.unit, TRACE_DIFFCOND_DELTA);
    c = parse1("ops.added>0");
    cr_assert_eq(c.metric, TRACE_DIFFCOND_OPS_ADDED);
    cr_assert_eq(c.unit, TRACE_DIFFCOND_VALUE);
    c = parse1("bw.peak>.5");
    cr_assert_float_eq(c.threshold, 0.5, 1e-12);
    char name[32];
    c = parse1("ve.ops<3");
    cr_assert_str_eq(trace_diffcond_metric_name(&c, name, sizeof(name)), "ve.ops");
}

Test(diffcond, comma_separated_lists_append)
{
    struct trace_diffcond *v = NULL;
    size_t n = 0;
    struct diag d;
    cr_assert_eq(trace_diffcond_parse("cycles>+5%, te.busy<-10%", &v, &n, &d), 0);
    cr_assert_eq(trace_diffcond_parse("dram.bytes>1000", &v, &n, &d), 0);
    cr_assert_eq(n, 3);
    cr_assert_eq(v[1].metric, TRACE_DIFFCOND_BUSY);
    cr_assert_eq(v[2].metric, TRACE_DIFFCOND_DRAM_BYTES);
    /* a bad one anywhere in a list appends nothing of it */
    cr_assert_lt(trace_diffcond_parse("ops<1,cyc>2", &v, &n, &d), 0);
    cr_assert_eq(n, 3);
    free(v);
}

Test(diffcond, bad_conditions_say_why_in_one_line)
{
    static const char *const bad[] = {
        "",
        ",",
        "cycles>5%,",
        "cyc>5",
        "cycles",
        "cycles=5",
        "cycles==5",
        "cycles>",
        "cycles>+",
        "cycles>5%%",
        "cycles>-1.05x",
        "cycles>1e5",
        "cycles>inf",
        "cycles>nan",
        "cycles>5 %",
        "cycles>1.2.3",
        "cycles>-",
        "dma.speed>1",
        "gpu.busy>1",
        ">5",
        "cycles<>5",
        "cycles>1234567890123456",
        "cycles>\x1b[31m",
        "\xff\xfe>1",
        "cycles>5x5",
        "cycles>5%x",
        "a.b.c.d>1",
        "te.busy.x>1",
        "cycles>+5%\n",
        "cycles>0000000000000000000000000000000000000000000000000000000000000000000000000000000001",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct trace_diffcond *v = NULL;
        size_t n = 0;
        struct diag d;
        diag_clear(&d);
        cr_assert_eq(trace_diffcond_parse(bad[i], &v, &n, &d), -SIM_EINVAL, "'%s' parsed", bad[i]);
        cr_assert_eq(n, 0);
        cr_assert(d.msg[0], "no message for '%s'", bad[i]);
        char line[2048];
        cr_assert_null(strchr(diag_format(&d, line, sizeof(line)), '\n'), "%s", line);
        cr_assert_null(strchr(line, '\x1b'), "%s", line);
        free(v);
    }
}

Test(diffcond, any_bytes_parse_or_fail_cleanly)
{
    static const char alphabet[] = "cyclesdmatebusyutilops.+-%x><=,0123456789 \t\x01\x80\xff";
    unsigned seed = 12345;
    for (int k = 0; k < 20000; k++) {
        char s[40];
        size_t len = (size_t)(k % 39);
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            s[i] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
        }
        s[len] = '\0';
        struct trace_diffcond *v = NULL;
        size_t n = 0;
        struct diag d;
        int rc = trace_diffcond_parse(s, &v, &n, &d);
        cr_assert(rc == 0 ? n >= 1 : n == 0);
        for (size_t i = 0; i < n; i++)
            cr_assert(isfinite(v[i].threshold));
        free(v);
    }
}

Test(diffcond, evaluation_of_each_unit_and_of_zero)
{
    struct trace_model *a = kernel_trace("vadd", 3, 1000, 100, "64");
    struct trace_model *b = kernel_trace("vadd", 3, 1000, 200, "32");
    struct trace_diff *d = trace_diff_new(a, b, NULL);
    struct trace_diffcond_result r;
    cr_assert(trace_diffcond_eval(&(struct trace_diffcond){.metric = TRACE_DIFFCOND_BUSY,
                                                           .engine = TRACE_ENGINE_DMA,
                                                           .unit = TRACE_DIFFCOND_PERCENT,
                                                           .threshold = 99.9},
                                  d, &r));
    cr_assert_float_eq(r.value, 100, 1e-9);
    cr_assert_not(trace_diffcond_eval(&(struct trace_diffcond){.metric = TRACE_DIFFCOND_BUSY,
                                                               .engine = TRACE_ENGINE_DMA,
                                                               .unit = TRACE_DIFFCOND_RATIO,
                                                               .threshold = 2},
                                      d, &r),
                  "2x is not > 2x");
    cr_assert(trace_diffcond_eval(&(struct trace_diffcond){.metric = TRACE_DIFFCOND_CYCLES,
                                                           .cmp = TRACE_DIFFCOND_GE,
                                                           .unit = TRACE_DIFFCOND_DELTA,
                                                           .threshold = 200},
                                  d, &r));
    cr_assert(trace_diffcond_eval(&(struct trace_diffcond){.metric = TRACE_DIFFCOND_UTIL,
                                                           .engine = TRACE_ENGINE_VE,
                                                           .cmp = TRACE_DIFFCOND_LT,
                                                           .unit = TRACE_DIFFCOND_DELTA,
                                                           .threshold = 0},
                                  d, &r),
              "the same VE time over a longer run");
    /* from nothing to something: +infinity percent; from nothing to nothing: 0, ratio 1 */
    cr_assert(trace_diffcond_eval(&(struct trace_diffcond){.metric = TRACE_DIFFCOND_BUSY,
                                                           .engine = TRACE_ENGINE_TE,
                                                           .cmp = TRACE_DIFFCOND_LE,
                                                           .unit = TRACE_DIFFCOND_PERCENT},
                                  d, &r));
    cr_assert_float_eq(r.value, 0, 1e-12);
    trace_diffcond_eval(
        &(struct trace_diffcond){.metric = TRACE_DIFFCOND_OPS_ADDED, .unit = TRACE_DIFFCOND_RATIO},
        d, &r);
    cr_assert_float_eq(r.value, 1, 1e-12);
    cr_assert_not(trace_diffcond_eval(
        &(struct trace_diffcond){.metric = TRACE_DIFFCOND_OPS_ADDED, .unit = TRACE_DIFFCOND_VALUE},
        d, &r));
    cr_assert(isinf(trace_diff_rel(0, 5)));
    cr_assert_float_eq(trace_diff_rel(0, 0), 0, 1e-12);
    trace_diff_free(d);
    trace_model_free(a);
    trace_model_free(b);
}
