/* The fast parser in front of cJSON (trace/file/fastjson.c): whatever it parses is the tree
 * cJSON builds from the same bytes, node for node and bit for bit, ending at the same byte;
 * what it does not handle it leaves to cJSON; every element of a real trace is its. */
#include "test_runtrace.h"
#include "test_tmpdir.h"
#include "trace/file/fastjson.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a and b hold the same values, linked the way cJSON links them (the first child's prev
 * the last one). */
static bool same_tree(const cJSON *a, const cJSON *b)
{
    if (a->type != b->type || a->valueint != b->valueint ||
        memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)) != 0)
        return false;
    if ((a->string == NULL) != (b->string == NULL) || (a->string && strcmp(a->string, b->string)))
        return false;
    if ((a->valuestring == NULL) != (b->valuestring == NULL) ||
        (a->valuestring && strcmp(a->valuestring, b->valuestring)))
        return false;
    const cJSON *x = a->child, *y = b->child, *lx = NULL, *ly = NULL;
    for (; x && y; lx = x, ly = y, x = x->next, y = y->next) {
        if (lx && (x->prev != lx || y->prev != ly))
            return false;
        if (!same_tree(x, y))
            return false;
    }
    if (x || y)
        return false;
    return !a->child || (a->child->prev == lx && b->child->prev == ly);
}

/* Parse text both ways: when the fast parser takes it, cJSON must give the same tree and
 * end. Returns whether the fast parser took it. */
static bool check(const char *text, size_t n)
{
    const char *fe = NULL, *ce = NULL;
    cJSON *f = trace_fastjson_parse(text, n, &fe);
    cJSON *c = cJSON_ParseWithLengthOpts(text, n, &ce, 0);
    if (f) {
        cr_assert_not_null(c, "cJSON refuses what the fast parser took: %.*s", (int)n, text);
        cr_assert(same_tree(f, c), "another tree: %.*s", (int)n, text);
        cr_assert_eq(fe, ce, "another end: %.*s", (int)n, text);
    }
    cJSON_Delete(f);
    cJSON_Delete(c);
    return f != NULL;
}

static bool check_s(const char *text)
{
    return check(text, strlen(text));
}

Test(fastjson, every_value_it_reads_is_the_one_cjson_reads)
{
    static const char *const taken[] = {"0",
                                        "-0",
                                        "7",
                                        "-12",
                                        "007",
                                        "123456789012345",
                                        "-123456789012345",
                                        "0.1",
                                        "37449352.253",
                                        "-0.5",
                                        "0.00000000000001",
                                        "99999999999999.9",
                                        "2147483647",
                                        "2147483648",
                                        "-2147483648",
                                        "-2147483649",
                                        "\"\"",
                                        "\"abc\"",
                                        "\"\xC3\xA9\"",
                                        "null",
                                        "true",
                                        "false",
                                        "{}",
                                        "[]",
                                        "[ ]",
                                        "{ }",
                                        " \t\n{\"a\" : 1 , \"b\":[ 1 , 2 ] }",
                                        "{\"a\":{\"b\":[null,true,false,\"x\",1.5]},\"c\":[[],{}]}",
                                        "0x10",
                                        "1a",
                                        "[1]x"};
    static const char *const left[] = {"1234567890123456",
                                       "1.000000000000001",
                                       "1e3",
                                       "1E-2",
                                       "+1",
                                       ".5",
                                       "1.",
                                       "1.2.3",
                                       "-",
                                       "\"a\\\"b\"",
                                       "\"\\u00e9\"",
                                       "\"tab\there\"",
                                       "nul",
                                       "tru",
                                       "[1,]",
                                       "{\"a\":}",
                                       "{\"a\" 1}",
                                       "[1 2]",
                                       "\"open",
                                       "{\"a\":1",
                                       "\xEF\xBB\xBF{}",
                                       "",
                                       "   ",
                                       "inf",
                                       "-nan"};
    for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++) {
        cr_assert(check_s(taken[i]), "the fast parser left %s", taken[i]);
        char buf[256];
        snprintf(buf, sizeof(buf), "{\"k\": %s, \"l\": [%s, %s]}", taken[i], taken[i], taken[i]);
        check_s(buf);
    }
    for (size_t i = 0; i < sizeof(left) / sizeof(left[0]); i++) {
        cr_assert_not(check_s(left[i]), "the fast parser took %s", left[i]);
        char buf[256];
        snprintf(buf, sizeof(buf), "{\"k\": %s}", left[i]);
        cr_assert_not(check_s(buf), "the fast parser took %s", buf);
    }
    /* not NUL-terminated: the value ends where the bytes do */
    cr_assert(check("12345", 3));
    cr_assert_not(check("\"abc\"", 4));
    char deep[300];
    memset(deep, '[', 150);
    memset(deep + 150, ']', 150);
    cr_assert_not(check(deep, sizeof(deep)), "deep nesting is cJSON's");
    cr_assert(check(deep + 100, 100), "50 levels are the fast parser's");
}

/* Every element of the timeline_events of a trace npuscope writes: the fast parser reads
 * them all, as cJSON does. */
Test(fastjson, a_written_trace_is_read_as_cjson_reads_it, .init = mkdir_tmp, .fini = rm_tmp)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/t.json", dir);
    test_write_run_trace(path);
    size_t n = 0;
    char *text = slurp(path, &n);
    const char *p = strstr(text, "\"timeline_events\"");
    cr_assert_not_null(p);
    p = strchr(p, '[') + 1;
    size_t count = 0;
    for (;;) {
        while (*p == ' ' || *p == '\n')
            p++;
        const char *end;
        cJSON *j = cJSON_ParseWithLengthOpts(p, n - (size_t)(p - text), &end, 0);
        cr_assert_not_null(j);
        cJSON_Delete(j);
        cr_assert(check(p, n - (size_t)(p - text)), "element %zu left to cJSON", count);
        count++;
        p = end;
        while (*p == ' ' || *p == '\n')
            p++;
        if (*p != ',')
            break;
        p++;
    }
    cr_assert_gt(count, 1000);
    free(text);
}
