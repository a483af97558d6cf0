/* Safe YAML loading: core-schema typing, positions, aliases and the safety limits. */
#include "sim/data/yaml.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct sim_value *parse_ok(const char *text)
{
    struct sim_value *v = NULL;
    struct diag d;
    char buf[1024];
    int rc = sim_yaml_parse(text, strlen(text), "t.yaml", &v, &d);
    cr_assert_eq(rc, 0, "unexpected error: %s", diag_format(&d, buf, sizeof(buf)));
    return v;
}

/* Parse text expecting failure with code; returns the formatted one-line message. */
static const char *parse_err(const char *text, size_t len, int code)
{
    static char buf[1024];
    struct sim_value *v = NULL;
    struct diag d;
    int rc = sim_yaml_parse(text, len, "t.yaml", &v, &d);
    cr_assert_eq(rc, -code, "expected error %d, got %d", -code, rc);
    cr_assert_null(v);
    return diag_format(&d, buf, sizeof(buf));
}

static const struct sim_value *item(const struct sim_value *list, size_t i)
{
    cr_assert_eq(list->type, SIM_V_LIST);
    cr_assert_lt(i, list->u.list.len);
    return list->u.list.items[i];
}

Test(yaml, core_schema_null_bool_int)
{
    struct sim_value *v =
        parse_ok("[~, null, Null, NULL, true, True, TRUE, false, False, FALSE, 0, -17, +4, "
                 "0x1F, 0o17, 9223372036854775807, -9223372036854775808]");
    for (size_t i = 0; i < 4; i++)
        cr_assert_eq(item(v, i)->type, SIM_V_NULL, "item %zu", i);
    for (size_t i = 4; i < 10; i++) {
        cr_assert_eq(item(v, i)->type, SIM_V_BOOL, "item %zu", i);
        cr_assert_eq(item(v, i)->u.b, i < 7);
    }
    int64_t want[] = {0, -17, 4, 31, 15, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < 7; i++) {
        cr_assert_eq(item(v, 10 + i)->type, SIM_V_INT, "item %zu", 10 + i);
        cr_assert_eq(item(v, 10 + i)->u.i, want[i]);
    }
    sim_value_free(v);
    v = parse_ok("empty:\n");
    cr_assert_eq(sim_value_map_get(v, "empty")->type, SIM_V_NULL);
    sim_value_free(v);
}

Test(yaml, core_schema_floats)
{
    struct sim_value *v = parse_ok("[1.5, .5, -2., 1e3, 2.5E-1, .inf, -.Inf, +.INF, .nan, .NaN]");
    double want[] = {1.5, 0.5, -2.0, 1000.0, 0.25, INFINITY, -INFINITY, INFINITY};
    for (size_t i = 0; i < 8; i++) {
        cr_assert_eq(item(v, i)->type, SIM_V_FLOAT, "item %zu", i);
        cr_assert_eq(item(v, i)->u.f, want[i], "item %zu", i);
    }
    cr_assert(isnan(item(v, 8)->u.f));
    cr_assert(isnan(item(v, 9)->u.f));
    sim_value_free(v);
}

Test(yaml, yaml11_spellings_and_quoted_scalars_are_strings)
{
    /* YAML 1.1 booleans, octal and sexagesimal are plain strings under 1.2's core schema */
    struct sim_value *v =
        parse_ok("[yes, no, on, 012x, 1:30, 1.2.3, '1', \"true\", \"~\", abc, 0x, .e5]");
    const char *want[] = {"yes", "no",   "on", "012x", "1:30", "1.2.3",
                          "1",   "true", "~",  "abc",  "0x",   ".e5"};
    for (size_t i = 0; i < 12; i++) {
        cr_assert_eq(item(v, i)->type, SIM_V_STR, "item %zu", i);
        cr_assert_str_eq(item(v, i)->u.str.s, want[i]);
    }
    sim_value_free(v);
}

Test(yaml, block_scalars_are_strings)
{
    struct sim_value *v = parse_ok("a: |\n  12\nb: >\n  true\n");
    cr_assert_str_eq(sim_value_get_str(v, "a", "?"), "12\n");
    cr_assert_str_eq(sim_value_get_str(v, "b", "?"), "true\n");
    sim_value_free(v);
}

Test(yaml, tags_are_honoured)
{
    struct sim_value *v = parse_ok("a: !!str 12\nb: !!float 3\nc: !!int 0x10\nd: ! 5\n");
    cr_assert_str_eq(sim_value_get_str(v, "a", "?"), "12");
    cr_assert_eq(sim_value_map_get(v, "b")->type, SIM_V_FLOAT);
    cr_assert_eq(sim_value_map_get(v, "b")->u.f, 3.0);
    cr_assert_eq(sim_value_get_int(v, "c", 0), 16);
    cr_assert_str_eq(sim_value_get_str(v, "d", "?"), "5");
    sim_value_free(v);
    const char *t = "x: !!int abc\n";
    cr_assert_str_eq(parse_err(t, strlen(t), SIM_EPARSE),
                     "t.yaml:1:4: value 'abc' does not match its tag !!int");
    t = "x: !custom 1\n";
    cr_assert_str_eq(parse_err(t, strlen(t), SIM_EPARSE), "t.yaml:1:4: unsupported tag '!custom'");
}

Test(yaml, map_keeps_order_and_positions)
{
    struct sim_yaml_doc *doc;
    struct diag d;
    const char *t = "zeta: 1\nalpha:\n  inner: [a, {k: v}]\nmid: x\n";
    cr_assert_eq(sim_yaml_load(t, strlen(t), "t.yaml", NULL, &doc, &d), 0);
    const struct sim_value *r = sim_yaml_doc_root(doc);
    cr_assert_eq(r->type, SIM_V_MAP);
    cr_assert_eq(r->u.map.len, 3);
    cr_assert_str_eq(r->u.map.keys[0], "zeta");
    cr_assert_str_eq(r->u.map.keys[1], "alpha");
    cr_assert_str_eq(r->u.map.keys[2], "mid");
    /* value positions: "1" at 1:7; alpha's map starts at its first key, 3:3 */
    cr_assert_eq(r->u.map.vals[0]->line, 1);
    cr_assert_eq(r->u.map.vals[0]->col, 7);
    const struct sim_value *alpha = sim_value_map_get(r, "alpha");
    cr_assert_eq(alpha->line, 3);
    cr_assert_eq(alpha->col, 3);
    const struct sim_value *inner = sim_value_map_get(alpha, "inner");
    cr_assert_eq(inner->line, 3);
    cr_assert_eq(inner->col, 10); /* the '[' */
    const struct sim_value *km = item(inner, 1);
    cr_assert_eq(km->col, 14);
    cr_assert_eq(sim_value_map_get(km, "k")->col, 18);
    /* key positions */
    int line = 0, col = 0;
    cr_assert(sim_yaml_doc_key_pos(doc, r, 1, &line, &col));
    cr_assert_eq(line, 2);
    cr_assert_eq(col, 1);
    cr_assert(sim_yaml_doc_key_pos(doc, alpha, 0, &line, &col));
    cr_assert_eq(line, 3);
    cr_assert_eq(col, 3);
    cr_assert(sim_yaml_doc_key_pos(doc, km, 0, &line, &col));
    cr_assert_eq(col, 15);
    cr_assert_not(sim_yaml_doc_key_pos(doc, km, 1, &line, &col));
    cr_assert_not(sim_yaml_doc_key_pos(doc, inner, 0, &line, &col)); /* a list */
    cr_assert_str_eq(sim_yaml_doc_file(doc), "t.yaml");
    sim_yaml_doc_free(doc);
}

Test(yaml, empty_stream_is_null)
{
    struct sim_value *v = parse_ok("# only a comment\n");
    cr_assert_eq(v->type, SIM_V_NULL);
    sim_value_free(v);
    v = parse_ok("");
    cr_assert_eq(v->type, SIM_V_NULL);
    sim_value_free(v);
}

Test(yaml, one_explicit_document_is_fine)
{
    struct sim_value *v = parse_ok("---\na: 1\n...\n");
    cr_assert_eq(sim_value_get_int(v, "a", 0), 1);
    sim_value_free(v);
}

Test(yaml, second_document_is_an_error)
{
    const char *t = "a: 1\n---\nb: 2\n";
    cr_assert_str_eq(parse_err(t, strlen(t), SIM_EPARSE),
                     "t.yaml:2:1: a second YAML document starts here; only one is allowed");
}

Test(yaml, duplicate_key_is_an_error_at_the_second)
{
    const char *t = "a: 1\nb:\n  x: 1\n  x: 2\n";
    cr_assert_str_eq(parse_err(t, strlen(t), SIM_EPARSE), "t.yaml:4:3: duplicate key 'x'");
    /* the same key in two different maps is fine */
    struct sim_value *v = parse_ok("a: {x: 1}\nb: {x: 2}\n");
    sim_value_free(v);
}

Test(yaml, duplicate_found_among_many_keys)
{
    /* enough keys to grow the duplicate set several times; the duplicate is the last one */
    size_t n = 20000, cap = n * 16 + 64, len = 0;
    char *t = malloc(cap);
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(t + len, cap - len, "k%zu: %zu\n", i, i);
    struct sim_value *v = NULL;
    struct diag d;
    cr_assert_eq(sim_yaml_parse(t, len, "t.yaml", &v, &d), 0);
    cr_assert_eq(v->u.map.len, n);
    cr_assert_eq(sim_value_get_int(v, "k12345", -1), 12345);
    sim_value_free(v);
    len += (size_t)snprintf(t + len, cap - len, "k777: again\n");
    cr_assert_eq(sim_yaml_parse(t, len, "t.yaml", &v, &d), -SIM_EPARSE);
    cr_assert_eq(d.line, (int)n + 1);
    cr_assert_str_eq(d.msg, "duplicate key 'k777'");
    free(t);
}

Test(yaml, keys_must_be_strings)
{
    const char *t = "a: 1\n1: x\n";
    cr_assert_str_eq(parse_err(t, strlen(t), SIM_EPARSE),
                     "t.yaml:2:1: mapping keys must be strings, got int (quote it to use it as a "
                     "string)");
    t = "true: x\n";
    cr_assert(strstr(parse_err(t, strlen(t), SIM_EPARSE), "got bool"));
    t = "? [a, b]\n: x\n";
    cr_assert_str_eq(parse_err(t, strlen(t), SIM_EPARSE),
                     "t.yaml:1:3: mapping keys must be strings, got a list");
    t = "{a: 1}: x\n";
    cr_assert(strstr(parse_err(t, strlen(t), SIM_EPARSE), "got a map"));
    t = "\"a\\0b\": x\n";
    cr_assert(strstr(parse_err(t, strlen(t), SIM_EPARSE), "NUL"));
    struct sim_value *v = parse_ok("\"1\": x\n'true': y\n");
    cr_assert_str_eq(sim_value_get_str(v, "1", "?"), "x");
    cr_assert_str_eq(sim_value_get_str(v, "true", "?"), "y");
    sim_value_free(v);
}

Test(yaml, aliases_are_deep_copies)
{
    struct sim_value *v = parse_ok("base: &b {lat: 5, bw: [1, 2]}\ncopy: *b\nname: &n x\nn2: *n\n");
    const struct sim_value *base = sim_value_map_get(v, "base");
    const struct sim_value *copy = sim_value_map_get(v, "copy");
    cr_assert(sim_value_equal(base, copy));
    cr_assert_neq(base, copy);
    cr_assert_neq(sim_value_map_get(base, "bw"), sim_value_map_get(copy, "bw"));
    cr_assert_str_eq(sim_value_get_str(v, "n2", "?"), "x");
    sim_value_free(v);
}

Test(yaml, anchored_key_can_be_aliased)
{
    struct sim_value *v = parse_ok("&k name: 1\nother: *k\n");
    cr_assert_eq(sim_value_get_int(v, "name", 0), 1);
    cr_assert_str_eq(sim_value_get_str(v, "other", "?"), "name");
    sim_value_free(v);
}

Test(yaml, unknown_and_recursive_aliases_are_errors)
{
    const char *t = "a: *nope\n";
    cr_assert_str_eq(parse_err(t, strlen(t), SIM_EPARSE),
                     "t.yaml:1:4: alias '*nope' names no finished anchor (undefined, or refers to "
                     "an enclosing node)");
    t = "a: &r [1, *r]\n";
    cr_assert(strstr(parse_err(t, strlen(t), SIM_EPARSE), "alias '*r' names no finished anchor"));
}

/* The classic alias bomb: 9 levels of 9 copies, 9^9 (~387 million) strings if expanded. */
static char *billion_laughs(void)
{
    char *t = malloc(4096);
    size_t len = (size_t)sprintf(t, "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for (char c = 'b'; c <= 'i'; c++)
        len += (size_t)sprintf(t + len, "%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n",
                               c, c, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1, c - 1);
    return t;
}

Test(yaml, billion_laughs_is_rejected)
{
    char *t = billion_laughs();
    const char *msg = parse_err(t, strlen(t), SIM_ELIMIT);
    cr_assert(strstr(msg, "document has more than 1048576 nodes (aliases count"), "%s", msg);
    free(t);
}

Test(yaml, node_limit_is_configurable)
{
    struct sim_yaml_limits lim = {.max_nodes = 100};
    struct sim_yaml_doc *doc;
    struct diag d;
    char *t = billion_laughs();
    cr_assert_eq(sim_yaml_load(t, strlen(t), "t.yaml", &lim, &doc, &d), -SIM_ELIMIT);
    /* a, b are 10 + 91 nodes plus their keys: the first alias of level c crosses 100 */
    cr_assert_eq(d.line, 2);
    cr_assert_null(doc);
    free(t);
    const char *small = "[1, 2, 3]";
    cr_assert_eq(sim_yaml_load(small, strlen(small), "t.yaml", &lim, &doc, &d), 0);
    sim_yaml_doc_free(doc);
}

static char *nested(size_t depth, const char *open, const char *close)
{
    size_t lo = strlen(open), lc = strlen(close);
    char *t = malloc(depth * (lo + lc) + 1), *p = t;
    for (size_t i = 0; i < depth; i++, p += lo)
        memcpy(p, open, lo);
    for (size_t i = 0; i < depth; i++, p += lc)
        memcpy(p, close, lc);
    *p = '\0';
    return t;
}

Test(yaml, nesting_up_to_the_limit_is_accepted)
{
    char *t = nested(SIM_YAML_MAX_DEPTH, "[", "]");
    struct sim_value *v = parse_ok(t);
    size_t depth = 0;
    const struct sim_value *x = v;
    while (x->type == SIM_V_LIST) {
        depth++;
        if (x->u.list.len == 0)
            break;
        x = x->u.list.items[0];
    }
    cr_assert_eq(depth, SIM_YAML_MAX_DEPTH);
    sim_value_free(v);
    free(t);
}

Test(yaml, nesting_beyond_the_limit_is_rejected)
{
    char *t = nested(SIM_YAML_MAX_DEPTH + 1, "{a: ", "}");
    const char *msg = parse_err(t, strlen(t), SIM_ELIMIT);
    cr_assert_str_eq(msg, "t.yaml:1:257: nesting deeper than 64 levels"); /* 65th '{' */
    free(t);
}

Test(yaml, two_megabytes_of_open_brackets_are_rejected_by_depth)
{
    size_t n = 2u << 20;
    char *t = malloc(n);
    memset(t, '[', n);
    cr_assert_str_eq(parse_err(t, n, SIM_ELIMIT), "t.yaml:1:65: nesting deeper than 64 levels");
    free(t);
}

Test(yaml, alias_cannot_exceed_the_depth_limit)
{
    /* an anchored list 60 levels deep, aliased 10 levels down, would be 70 deep */
    char *inner = nested(60, "[", "]");
    char *outer = nested(10, "[", "]");
    size_t cap = strlen(inner) + strlen(outer) + 64;
    char *t = malloc(cap);
    snprintf(t, cap, "a: &x %s\nb: %.*s*x%s\n", inner, 10, outer, outer + 10);
    const char *msg = parse_err(t, strlen(t), SIM_ELIMIT);
    cr_assert(strstr(msg, "alias '*x' nests deeper than 64 levels"), "%s", msg);
    free(inner);
    free(outer);
    free(t);
}

Test(yaml, syntax_errors_have_positions)
{
    const char *t = "a: [1, 2\n";
    cr_assert_str_eq(parse_err(t, strlen(t), SIM_EPARSE),
                     "t.yaml:2:1: YAML syntax error: did not find expected ',' or ']' while "
                     "parsing a flow sequence (line 1, column 4)");
    t = "a:\n  b: 1\n c: 2\n";
    cr_assert_str_eq(parse_err(t, strlen(t), SIM_EPARSE),
                     "t.yaml:3:2: YAML syntax error: did not find expected key while parsing a "
                     "block mapping (line 1, column 1)");
    t = "a: \"unterminated\n";
    cr_assert(strstr(parse_err(t, strlen(t), SIM_EPARSE), "t.yaml:"));
}

Test(yaml, invalid_utf8_and_nul_are_rejected)
{
    const char *t = "a: ok\nb: \xff\n";
    cr_assert_str_eq(parse_err(t, strlen(t), SIM_EPARSE),
                     "t.yaml:2:4: YAML syntax error: invalid leading UTF-8 octet (byte 0xff)");
    const char nul[] = "a: x\0y\n";
    const char *msg = parse_err(nul, sizeof(nul) - 1, SIM_EPARSE);
    cr_assert(strstr(msg, "t.yaml:1:"), "%s", msg);
}

Test(yaml, integers_out_of_range_are_errors)
{
    const char *t = "a: 9223372036854775808\n";
    cr_assert_str_eq(parse_err(t, strlen(t), SIM_EPARSE),
                     "t.yaml:1:4: integer '9223372036854775808' does not fit in 64 bits");
    t = "a: 0x8000000000000000\n";
    cr_assert(strstr(parse_err(t, strlen(t), SIM_EPARSE), "does not fit in 64 bits"));
    t = "a: 1e999\n";
    cr_assert_str_eq(parse_err(t, strlen(t), SIM_EPARSE),
                     "t.yaml:1:4: float '1e999' is out of range");
}

Test(yaml, missing_file_is_an_io_error)
{
    struct sim_yaml_doc *doc;
    struct diag d;
    char buf[1024];
    cr_assert_eq(sim_yaml_load_file("no/such/file.yaml", NULL, &doc, &d), -SIM_EIO);
    cr_assert_null(doc);
    cr_assert_str_eq(diag_format(&d, buf, sizeof(buf)),
                     "no/such/file.yaml: cannot open: No such file or directory");
}

/* A builder that records what it was given and answers with the int out points at. */
struct built {
    int calls;
    const char *file;
    int64_t x;
    int line, col; /* where key "x" was written */
    int answer;
};

static int build_x(const struct sim_value *root, const struct sim_yaml_doc *doc, const char *file,
                   void *out, struct diag *d)
{
    struct built *b = out;
    b->calls++;
    b->file = file;
    b->x = sim_value_get_int(root, "x", -1);
    sim_yaml_doc_key_pos(doc, root, 0, &b->line, &b->col);
    if (b->answer)
        return diag_set(d, SIM_EINVAL, file, 1, 1, "x", "refused");
    return 0;
}

Test(yaml, build_hands_the_document_to_the_builder)
{
    struct built b = {0};
    struct diag d;
    cr_assert_eq(sim_yaml_build("\n  x: 7\n", 8, "t.yaml", build_x, &b, &d), 0);
    cr_assert_eq(b.calls, 1);
    cr_assert_str_eq(b.file, "t.yaml");
    cr_assert_eq(b.x, 7);
    cr_assert_eq(b.line, 2, "the builder can ask where keys were written");
    cr_assert_eq(b.col, 3);
    /* the builder's error is the result */
    b = (struct built){.answer = 1};
    cr_assert_eq(sim_yaml_build("x: 7\n", 5, "t.yaml", build_x, &b, &d), -SIM_EINVAL);
    cr_assert_str_eq(d.msg, "refused");
    /* a document that does not load never reaches the builder */
    b = (struct built){0};
    cr_assert_eq(sim_yaml_build("x: [\n", 5, "t.yaml", build_x, &b, &d), -SIM_EPARSE);
    cr_assert_eq(b.calls, 0);
    cr_assert_eq(sim_yaml_build_file("no/such/file.yaml", build_x, &b, &d), -SIM_EIO);
    cr_assert_eq(b.calls, 0);
    cr_assert_str_eq(d.file, "no/such/file.yaml");
}

Test(yaml, take_root_transfers_ownership)
{
    struct sim_yaml_doc *doc;
    struct diag d;
    cr_assert_eq(sim_yaml_load("{a: 1}", 6, NULL, NULL, &doc, &d), 0);
    struct sim_value *r = sim_yaml_doc_take_root(doc);
    cr_assert_null(sim_yaml_doc_root(doc));
    int line, col;
    cr_assert(sim_yaml_doc_key_pos(doc, r, 0, &line, &col));
    cr_assert_eq(col, 2);
    cr_assert_str_eq(sim_yaml_doc_file(doc), "");
    sim_yaml_doc_free(doc);
    cr_assert_eq(sim_value_get_int(r, "a", 0), 1);
    sim_value_free(r);
}
