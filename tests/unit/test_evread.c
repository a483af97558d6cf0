/* An ENGINE_EVENT's details read as text (trace/file/evread.h): the members the loader
 * reads and the op columns are what the tree of the same details gives, for details of
 * every shape the writer gives and others; details of another shape are read as a tree. */
#include "trace/file/evread.h"
#include "trace/model/format.h"
#include "trace/model/model.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct variant {
    const char *engine, *op, *op_kind, *details;
    bool text; /* read as text (else as a tree) */
};

static const struct variant variants[] = {
    {"DMA", "dma_read", "memory",
     "{\"src_addr\":4398046610048,\"nbytes\":64,\"handle_id\":\"sip0.cube1.pe0/h684\","
     "\"replay\":{\"src_space\":\"hbm\",\"dst_space\":\"tcm\",\"dst_addr\":4398046511232,"
     "\"shape\":[16],\"dtype\":\"f32\"},\"src\":\"allreduce.c:95\",\"src_func\":\"sim_k\"}",
     true},
    {"DMA", "ipcq_copy", "memory",
     "{\"src_space\":\"tcm\",\"src_addr\":1099511628032,\"dst_space\":\"sram\",\"dst_addr\":"
     "2199040033536,\"shape\":[16],\"dtype\":\"f32\",\"nbytes\":64,\"tensor_role\":\"act\"}",
     true},
    {"VE", "add", "math",
     "{\"input_addrs\":[1099511627904,1099511627840],\"input_shapes\":[[16],[16]],"
     "\"input_spaces\":[\"tcm\",\"tcm\"],\"input_dtypes\":[\"f32\",\"f32\"],\"dst_addr\":64,"
     "\"dst_space\":\"tcm\",\"shape_out\":[16],\"dtype\":\"f32\",\"axis\":null}",
     true},
    {"TE", "gemm", "gemm",
     "{\"src_a_addr\":0,\"src_b_addr\":4096,\"dst_addr\":8192,\"shape_a\":[16,32],\"shape_b\":"
     "[32,8],\"shape_out\":[16,8],\"dtype_in\":\"f16\",\"dtype_out\":\"f32\",\"m\":16,\"n\":8,"
     "\"k\":32,\"src_a_space\":\"tcm\",\"src_b_space\":\"tcm\",\"dst_space\":\"scratch\"}",
     true},
    {"TE", "composite_gemm", "gemm",
     "{\"replay\":{\"shape_a\":[3,64,128],\"shape_b\":[128,7],\"dtype_in\":\"bf16\"},"
     "\"out_addr\":512,\"out_nbytes\":2688,\"src_a_addr\":0}",
     true},
    {"VE", "composite_softmax", "math", "{\"out_addr\":1024,\"out_nbytes\":4096}", true},
    {"TE", "TileToken/GEMM", "gemm",
     "{\"replay\":{\"shape_a\":[1,17],\"shape_b\":[17,1]},\"dtype_in\":\"f16\"}", true},
    {"DMA", "TileToken/DMA", "memory",
     "{\"nbytes\":96,\"src_space\":\"hbm\",\"src_addr\":0,\"dst_space\":\"tcm\","
     "\"dst_addr\":96}",
     true},
    {"HOST", "MemoryWrite", "unknown",
     "{\"msg_type\":\"MemoryWrite\",\"dst_pa\":0,\"nbytes\":512,\"bytes\":64,\"ok\":true,"
     "\"error_code\":null}",
     true},
    {"DMA", "load", NULL, "{\"direction\":\"read\",\"bytes\":128,\"dram_addr\":4096}", true},
    {"DMA", "store", NULL, "{\"direction\":\"write\",\"bytes\":0,\"dram_addr\":7}", true},
    /* the first of a repeated member; the repeat read as it may be */
    {"DMA", "dma_write", "memory",
     "{\"nbytes\":1,\"nbytes\":2,\"src\":\"a.c:1\",\"src\":\"b.c:2\",\"src_addr\":5,"
     "\"src_addr\":\"x\",\"dst_addr\":8,\"dst_addr\":0.5}",
     true},
    /* the first replay, not an object, hides a second one */
    {"DMA", "dma_read", "memory",
     "{\"replay\":[1,2],\"replay\":{\"dst_space\":\"tcm\"},\"nbytes\":8,\"src_addr\":0}", true},
    /* DRAM traffic named under replay alone; a replay's own src is not the event's */
    {"DMA", "dma_read", "memory",
     "{\"replay\":{\"direction\":\"read\",\"tensor_role\":\"weight\",\"src_space\":\"hbm\","
     "\"dst_space\":\"tcm\",\"src\":\"r.c:1\",\"replay\":{\"dst_space\":\"x\"}},\"nbytes\":64,"
     "\"src_addr\":0,\"dst_addr\":64}",
     true},
    {"DMA", "dma_read", "memory",
     "{\"direction\":\"write\",\"replay\":{\"direction\":\"read\",\"src_space\":\"sram\"},"
     "\"tensor_role\":\"kv\",\"nbytes\":64}",
     true},
    /* a string not at the top is looked for under replay; an integer is not */
    {"DMA", "dma_read", "memory",
     "{\"src_space\":5,\"dst_addr\":\"x\",\"replay\":{\"src_space\":\"sram\",\"dst_space\":"
     "\"tcm\",\"dst_addr\":128},\"src_addr\":64,\"nbytes\":32}",
     true},
    {"DMA", "dma_read", "memory",
     "{\"dst_space\":\"tcm\",\"replay\":{\"dst_addr\":128,\"src_space\":\"sram\"},"
     "\"src_addr\":64,\"nbytes\":32}",
     true},
    {"TE", "gemm", "gemm", "{\"src\":12,\"src_func\":\"f\",\"m\":-1,\"n\":2,\"k\":3}", true},
    {"VE", "exp", "math", "{\"src\":null,\"src_func\":\"\",\"length\":100}", true},
    {"DMA", "dma_write", "memory", "{\"src_addr\":-5,\"dst_addr\":-0,\"nbytes\":-0,\"bytes\":-3}",
     true},
    {"DMA", "dma_write", "memory",
     "{\"scale\":0.125,\"eps\":1e-5,\"big\":123456789012345678901,\"nbytes\":4,\"dst_addr\":"
     "999999999999999,\"x\":[1.5,{\"y\":-2E+3,\"z\":[true,false,null]}],\"w\":{},\"v\":[]}",
     true},
    {"DMA", "dma_write", "memory",
     "{\"nbytes\":true,\"src_space\":false,\"direction\":null,\"bytes\":\"8\"}", true},
    {"VE", "sum", "math",
     "{\"input_addrs\":[0,64,\"x\",-1],\"input_shapes\":[[4,4],[4],[2]],\"input_spaces\":"
     "[\"tcm\"],\"input_dtypes\":[null,\"f16\"],\"dtype\":\"f16\",\"shape_out\":[4],"
     "\"axis\":1,\"dst_addr\":128}",
     true},
    {"TE", "gemm", "gemm",
     "{\"shape_a\":5,\"shape_b\":[2,\"a\"],\"shape_out\":[],\"dtype_in\":\"i8\",\"dst_addr\":3}",
     true},
    {"OTHER", "barrier", NULL, "{}", true},
    {"DMA", "dma_read", "memory",
     "{\"src\":\"\\u00e9t\\u00e9.c:1\xc3\xa9\",\"nbytes\":4}", /* UTF-8 bytes are plain */
     false},
    {"DMA", "dma_read", "memory", "{\"src\":\"caf\xc3\xa9.c:1\",\"nbytes\":4}", true},
    /* another shape: read as a tree */
    {"DMA", "dma_write", "memory", "{\"nbytes\":4.0,\"dst_addr\":8}", false},
    {"DMA", "dma_write", "memory", "{\"note\":\"a\\\"b\",\"nbytes\":4}", false},
    {"DMA", "dma_write", "memory", "{\"src_addr\":1234567890123456,\"nbytes\":4}", false},
    {"DMA", "dma_write", "memory", "{\"nbytes\": 4}", false},
    {"DMA", "dma_write", "memory", "{\"src\":[\"a.c:1\"],\"nbytes\":4}", false},
    {"DMA", "dma_write", "memory", "{\"src_addr\":007,\"nbytes\":4}", false},
    {"DMA", "dma_write", "memory", "{\"shape_a\":[1e3],\"nbytes\":4}", false},
};

/* An ENGINE_EVENT of the writer's shape with these values. */
static char *event_text(const struct variant *v, size_t *len)
{
    char *t;
    FILE *f = open_memstream(&t, len);
    fprintf(f,
            "{\"type\":\"ENGINE_EVENT\",\"engine\":\"%s\",\"engine_id\":1,\"cmdq_id\":0,"
            "\"layer_id\":null,\"tile_id\":null,\"op\":\"%s\",\"start_cycle\":1,"
            "\"end_cycle\":2,\"component_id\":\"c\"",
            v->engine, v->op);
    if (v->op_kind)
        fprintf(f, ",\"op_kind\":\"%s\"", v->op_kind);
    fprintf(f, ",\"details\":%s}", v->details);
    fclose(f);
    return t;
}

static void same_node(const cJSON *a, const cJSON *b, const char *what, int k)
{
    cr_assert_eq(a == NULL, b == NULL, "%s: member %d found or not alike", what, k);
    if (!a)
        return;
    cr_assert_eq(a->type & 0xFF, b->type & 0xFF, "%s: member %d's type", what, k);
    if (cJSON_IsString(a))
        cr_assert_str_eq(a->valuestring, b->valuestring, "%s: member %d", what, k);
    if (cJSON_IsNumber(a)) {
        cr_assert_eq(memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)), 0,
                     "%s: member %d: %g, want %g", what, k, a->valuedouble, b->valuedouble);
        cr_assert_eq(a->valueint, b->valueint, "%s: member %d", what, k);
    }
}

static void same_opinfo(const struct trace_opinfo_pre *a, const struct trace_opinfo_pre *b,
                        const char *what)
{
    cr_assert_eq(memcmp(&a->o.flops, &b->o.flops, sizeof(double)), 0, "%s: flops %g, want %g", what,
                 a->o.flops, b->o.flops);
    cr_assert_eq(a->o.bytes, b->o.bytes, "%s: bytes", what);
    cr_assert_str_eq(a->o.dtype, b->o.dtype, "%s", what);
    cr_assert_eq(a->o.stage, b->o.stage, "%s", what);
    cr_assert_eq(a->o.nreads, b->o.nreads, "%s: reads", what);
    for (unsigned r = 0; r < a->o.nreads; r++)
        cr_assert(a->o.reads[r].space == b->o.reads[r].space &&
                      a->o.reads[r].lo == b->o.reads[r].lo && a->o.reads[r].hi == b->o.reads[r].hi,
                  "%s: read %u", what, r);
    cr_assert_eq(a->o.has_write, b->o.has_write, "%s: write", what);
    if (a->o.has_write)
        cr_assert(a->o.write.space == b->o.write.space && a->o.write.lo == b->o.write.lo &&
                      a->o.write.hi == b->o.write.hi,
                  "%s: write", what);
    cr_assert_eq(a->sp.n, b->sp.n, "%s: spaces", what);
    for (unsigned s = 0; s < a->sp.n; s++)
        cr_assert_str_eq(a->sp.names[s], b->sp.names[s], "%s", what);
}

/* What the tree of the same details gives, beside ev's. */
static void expect_as_tree(const struct variant *v, const struct trace_evread *ev)
{
    cJSON *tree = cJSON_Parse(v->details);
    cr_assert_not_null(tree, "%s", v->details);
    bool dram = strcmp(v->engine, "DMA") == 0;
    const cJSON *found[TRACE_EVK_REP_END];
    trace_evread_find(tree, dram, found);
    for (int k = 0; k < TRACE_EVK_REP_END; k++)
        if (k != TRACE_EVK_REPLAY || !ev->dtext_ok)
            same_node(ev->found[k], found[k], v->details, k);
    cr_assert(ev->kind_ok, "%s", v->details);
    static struct trace_opinfo_pre want;
    trace_opinfo_decode_pre(v->op, ev->kind, tree, &want);
    same_opinfo(&ev->opinfo, &want, v->details);
    /* and the loading thread's decode of the text, with a registry of its own */
    if (ev->dtext_ok) {
        struct trace_spaces sp;
        trace_spaces_init(&sp);
        static struct trace_opinfo_pre got;
        trace_opinfo_decode_text(v->op, ev->kind, &ev->dtext, &sp, &got.o);
        got.sp = sp;
        same_opinfo(&got, &want, v->details);
    }
    cJSON_Delete(tree);
}

/* The tree of details read as one (its nodes are cJSON's, outside a load's arena). */
static void drop_tree(struct trace_evread *ev)
{
    cJSON_Delete(ev->details);
    ev->details = NULL;
}

Test(evread, details_read_as_text_are_what_their_tree_gives)
{
    static struct trace_evread ev;
    for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
        const struct variant *v = &variants[i];
        size_t n, len;
        char *t = event_text(v, &n);
        bool ok = trace_evread_engine(t, n, true, &len, &ev);
        if (!ok && !v->text) { /* cJSON reads the element (the loader's own suites) */
            drop_tree(&ev);
            free(t);
            continue;
        }
        cr_assert(ok, "%s", v->details);
        cr_assert_eq(len, n, "%s", v->details);
        cr_assert_eq(ev.dtext_ok, v->text, "%s read as %s", v->details,
                     ev.dtext_ok ? "text" : "a tree");
        expect_as_tree(v, &ev);
        drop_tree(&ev);
        free(t);
    }
}

/* A string of every length up to past two of the reader's sixteen-byte blocks (and its
 * eight-byte words where it has no SSE2), with the byte that ends it (or a control byte, or
 * a backslash) at every place: read up to that byte, never past it. */
Test(evread, strings_end_at_their_quote_and_control_bytes_give_up)
{
    static struct trace_evread ev;
    for (size_t k = 0; k <= 35; k++) {
        char s[48];
        for (size_t j = 0; j < k; j++) /* a space, 0x7f and bytes past it too */
            s[j] = j % 7 == 6     ? ' '
                   : j % 11 == 10 ? '\x7f'
                                  : (char)('a' + j % 26 + (j % 3 == 2 ? 0x60 : 0));
        s[k] = '\0';
        char details[128];
        snprintf(details, sizeof(details), "{\"src\":\"%s\",\"src_func\":\"f\",\"nbytes\":%zu}", s,
                 k);
        struct variant v = {"DMA", "dma_write", "memory", details, true};
        size_t n, len;
        char *t = event_text(&v, &n);
        cr_assert(trace_evread_engine(t, n, true, &len, &ev));
        cr_assert(ev.dtext_ok, "length %zu", k);
        cr_assert_str_eq(ev.found[TRACE_EVK_SRC]->valuestring, s, "length %zu", k);
        cr_assert_eq(ev.opinfo.o.bytes, k);
        expect_as_tree(&v, &ev);
        /* a control byte or a backslash in its place: not the writer's, read as a tree */
        for (size_t at = 0; at < k; at++) {
            char *c = strstr(t, "\"src\":\"") + 7 + at, keep = *c;
            *c = at % 3 == 0 ? '\x01' : at % 3 == 1 ? '\x1f' : '\\';
            cr_assert(!trace_evread_engine(t, n, true, &len, &ev) || !ev.dtext_ok,
                      "a control byte at %zu of %zu", at, k);
            drop_tree(&ev);
            *c = keep;
        }
        free(t);
    }
}

/* Details past TRACE_EVREAD_DETAILS bytes, or nested past what is read as text, are read as
 * a tree: the same members and op columns. */
Test(evread, long_or_deep_details_are_read_as_a_tree)
{
    static struct trace_evread ev;
    size_t big = TRACE_EVREAD_DETAILS + 100;
    char *d = malloc(big + 200);
    int at = sprintf(d, "{\"src\":\"a.c:1\",\"pad\":\"");
    memset(d + at, 'x', big);
    sprintf(d + at + big, "\",\"nbytes\":4,\"src_addr\":8}");
    struct variant v = {"DMA", "dma_read", "memory", d, false};
    size_t n, len;
    char *t = event_text(&v, &n);
    cr_assert(trace_evread_engine(t, n, true, &len, &ev));
    cr_assert_not(ev.dtext_ok, "long details");
    expect_as_tree(&v, &ev);
    drop_tree(&ev);
    free(t);
    for (int depth = 20; depth <= 40; depth += 20) {
        at = sprintf(d, "{\"nbytes\":4,\"deep\":");
        for (int k = 0; k < depth; k++)
            d[at++] = '[';
        for (int k = 0; k < depth; k++)
            d[at++] = ']';
        sprintf(d + at, ",\"src_addr\":8}");
        v.text = depth < 32;
        t = event_text(&v, &n);
        cr_assert(trace_evread_engine(t, n, true, &len, &ev));
        cr_assert_eq(ev.dtext_ok, v.text, "depth %d", depth);
        expect_as_tree(&v, &ev);
        drop_tree(&ev);
        free(t);
    }
    free(d);
}
