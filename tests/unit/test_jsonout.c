/* The trace's JSON output (trace/file/jsonout.c): numbers written shortest and read back
 * exactly, strings with controls and bad UTF-8 made valid JSON, across buffer chunks. */
#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "test_tmpdir.h"
#include "trace/file/jsonout.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- numbers ---------------------------------------------------------------------------- */

static const char *fmt_d(double v)
{
    static char buf[64];
    size_t n = trace_fmt_double(buf, v);
    buf[n] = '\0';
    return buf;
}

Test(jsonout, doubles_are_shortest_and_read_as_floats)
{
    /* the expected strings are Python's repr() of the same values */
    cr_assert_str_eq(fmt_d(0.1), "0.1");
    cr_assert_str_eq(fmt_d(1.0), "1.0");
    cr_assert_str_eq(fmt_d(-2.5), "-2.5");
    cr_assert_str_eq(fmt_d(123.456), "123.456");
    cr_assert_str_eq(fmt_d(0.1 + 0.2), "0.30000000000000004");
    cr_assert_str_eq(fmt_d(1.0 / 3), "0.3333333333333333");
    cr_assert_str_eq(fmt_d(-0.0), "-0.0");
    cr_assert_str_eq(fmt_d(9007199254740992.0), "9007199254740992.0");
    cr_assert_str_eq(fmt_d(1e300), "1e+300");
    cr_assert_str_eq(fmt_d(5e-324), "5e-324");
    cr_assert_str_eq(fmt_d(1.7976931348623157e308), "1.7976931348623157e+308");
    cr_assert_str_eq(fmt_d(2e-7), "2e-07");
    cr_assert_str_eq(fmt_d(NAN), "null");
    cr_assert_str_eq(fmt_d(INFINITY), "null");
    cr_assert_str_eq(fmt_d(-INFINITY), "null");
}

Test(jsonout, every_double_reads_back_exactly)
{
    unsigned seed = 99;
    for (int i = 0; i < 200000; i++) {
        uint64_t bits = ((uint64_t)rand_r(&seed) << 42) ^ ((uint64_t)rand_r(&seed) << 21) ^
                        (uint64_t)rand_r(&seed);
        double v;
        if (i % 2) {
            memcpy(&v, &bits, sizeof(v));
        } else { /* times in ns from integer ticks: the fast path */
            v = (double)(bits % 100000000) / (i % 4 ? 1000.0 : 10.0);
        }
        if (!isfinite(v))
            continue;
        const char *s = fmt_d(v);
        cr_assert(strpbrk(s, ".e"), "%s does not read as a float", s);
        cr_assert_eq(strtod(s, NULL), v, "%s does not read back as %.17g", s, v);
    }
}

Test(jsonout, integers)
{
    char b[32];
    b[trace_fmt_u64(b, 0)] = '\0';
    cr_assert_str_eq(b, "0");
    b[trace_fmt_u64(b, 10)] = '\0';
    cr_assert_str_eq(b, "10");
    b[trace_fmt_u64(b, 1234567)] = '\0';
    cr_assert_str_eq(b, "1234567");
    b[trace_fmt_u64(b, UINT64_MAX)] = '\0';
    cr_assert_str_eq(b, "18446744073709551615");
    b[trace_fmt_i64(b, INT64_MIN)] = '\0';
    cr_assert_str_eq(b, "-9223372036854775808");
    b[trace_fmt_i64(b, -7)] = '\0';
    cr_assert_str_eq(b, "-7");
}

/* ---- strings ---------------------------------------------------------------------------- */

/* Write s as a JSON string into a file, read it back with cJSON. */
static char *round_trip_str(const char *s, size_t n, char **raw)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/s.json", dir);
    struct trace_out o;
    cr_assert_eq(trace_out_open(&o, path, NULL), 0);
    trace_out_str(&o, s, n);
    cr_assert_eq(trace_out_commit(&o, NULL), 0);
    char *text = slurp(path, NULL);
    cJSON *j = cJSON_Parse(text);
    cr_assert(cJSON_IsString(j), "not a JSON string: %.80s", text);
    char *back = sim_xstrdup(j->valuestring);
    cJSON_Delete(j);
    if (raw)
        *raw = text;
    else
        free(text);
    return back;
}

/* Valid UTF-8 kept, each invalid byte replaced by U+FFFD. */
static char *sanitized(const char *s, size_t n)
{
    char *out = malloc(3 * n + 1), *q = out;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = sim_utf8_decode(s + i, n - i, &cp);
        if (cp == 0xFFFD && !(k == 3 && memcmp(s + i, "\xEF\xBF\xBD", 3) == 0))
            k = 1, memcpy(q, "\xEF\xBF\xBD", 3), q += 3;
        else
            memcpy(q, s + i, k), q += k;
        i += k;
    }
    *q = '\0';
    return out;
}

Test(jsonout, strings_round_trip_with_controls_and_bad_utf8, .init = mkdir_tmp, .fini = rm_tmp)
{
    char *raw;
    char *back = round_trip_str("a\"b\\c\n\t\x1b]52;c;x\x07/\x7f", 18, &raw);
    cr_assert_str_eq(back, "a\"b\\c\n\t\x1b]52;c;x\x07/\x7f");
    cr_assert_null(strchr(raw, '\x1b'), "ESC written raw");
    cr_assert_not_null(strstr(raw, "\\u001b"));
    free(raw);
    free(back);
    back = round_trip_str("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, NULL);
    cr_assert_str_eq(back, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    free(back);
    back = round_trip_str("x\xff"
                          "y\xc0\xaf"
                          "z\xe2\x82",
                          8, NULL);
    cr_assert_str_eq(back, "x\xef\xbf\xbd"
                           "y\xef\xbf\xbd\xef\xbf\xbd"
                           "z\xef\xbf\xbd\xef\xbf\xbd");
    free(back);
    back = round_trip_str("a\0b", 3, &raw); /* NUL is written escaped */
    cr_assert_not_null(strstr(raw, "a\\u0000b"));
    free(raw);
    free(back);
}

Test(jsonout, random_byte_strings_round_trip, .init = mkdir_tmp, .fini = rm_tmp)
{
    unsigned seed = 4;
    for (int r = 0; r < 300; r++) {
        char s[200];
        size_t n = (size_t)rand_r(&seed) % sizeof(s);
        for (size_t i = 0; i < n; i++) {
            int c = rand_r(&seed) % 256;
            s[i] = (char)(c ? c : 'z'); /* cJSON strings end at NUL */
        }
        char *back = round_trip_str(s, n, NULL);
        char *want = sanitized(s, n);
        cr_assert_str_eq(back, want);
        free(back);
        free(want);
    }
}

Test(jsonout, long_strings_keep_characters_across_chunks, .init = mkdir_tmp, .fini = rm_tmp)
{
    size_t n = 0;
    char *s = malloc(40000);
    for (int i = 0; n < 39990; i++) {
        const char *c = i % 3 == 0 ? "\xc3\xa9" : i % 3 == 1 ? "\xe2\x82\xac" : "\xf0\x9f\x98\x80";
        memcpy(s + n, c, strlen(c));
        n += strlen(c);
    }
    s[n] = '\0';
    char *back = round_trip_str(s, n, NULL);
    cr_assert_str_eq(back, s, "a multi-byte character was split");
    free(back);
    free(s);
}
