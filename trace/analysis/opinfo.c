/* What an ENGINE_EVENT's details say about its work (see opinfo.h). */
#include "trace/analysis/opinfo.h"

#include "sim/chip/oppack.h"
#include "sim/data/dtype.h"
#include "sim/util/xalloc.h"
#include "trace/model/format.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* In strcmp order (opinfo.h). */
const char *const trace_opinfo_keys[] = {"axis",
                                         "bytes",
                                         "direction",
                                         "dram_addr",
                                         "dst_addr",
                                         "dst_space",
                                         "dtype",
                                         "dtype_in",
                                         "dtype_out",
                                         "input_addrs",
                                         "input_dtypes",
                                         "input_shapes",
                                         "input_spaces",
                                         "k",
                                         "length",
                                         "m",
                                         "n",
                                         "nbytes",
                                         "out_addr",
                                         "out_nbytes",
                                         "shape_a",
                                         "shape_b",
                                         "shape_out",
                                         "src_a_addr",
                                         "src_a_space",
                                         "src_addr",
                                         "src_b_addr",
                                         "src_b_space",
                                         "src_space",
                                         NULL};

void trace_spaces_init(struct trace_spaces *s)
{
    static const struct trace_spaces std = {.names = {"hbm", "tcm", "sram"}, .n = 3};
    *s = std;
}

/* strcmp(a, b) == 0 for the short names of spaces, inline: the call of strcmp was a
 * twentieth of a load's thread that decodes details (perf, 10 M events). */
static inline bool same_name(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

/* The id of a space name, registered when new; -1 when there is no room. */
static int space_id(struct trace_spaces *s, const char *name)
{
    if (!name || !name[0])
        return -1;
    /* first bytes compared before the names (a million calls a second at a load) */
    char c = name[0];
    if ((c == 'd' || c == 'D') && (same_name(name, "dram") || same_name(name, "DRAM")))
        return 0;
    if ((c == 's' || c == 'S') && (name[1] == 'p' || name[1] == 'P') &&
        (same_name(name, "spm") || same_name(name, "SPM")))
        return 2;
    for (unsigned i = 0; i < s->n; i++)
        if (s->names[i][0] == c && same_name(s->names[i], name))
            return (int)i;
    if (s->n == TRACE_OPINFO_MAX_SPACES || strlen(name) >= sizeof(s->names[0]))
        return -1;
    snprintf(s->names[s->n], sizeof(s->names[0]), "%s", name);
    return (int)s->n++;
}

/*
 * The details are read through a node that is either a value tree (sim_value) or a parsed
 * JSON object (cJSON, as the loader has it), with the same meaning: a JSON number is an int
 * when it is whole and fits, else a float (trace_json_to_value). Keys are looked up by their
 * position in trace_opinfo_keys.
 */
enum key {
    K_AXIS,
    K_BYTES,
    K_DIRECTION,
    K_DRAM_ADDR,
    K_DST_ADDR,
    K_DST_SPACE,
    K_DTYPE,
    K_DTYPE_IN,
    K_DTYPE_OUT,
    K_INPUT_ADDRS,
    K_INPUT_DTYPES,
    K_INPUT_SHAPES,
    K_INPUT_SPACES,
    K_K,
    K_LENGTH,
    K_M,
    K_N,
    K_NBYTES,
    K_OUT_ADDR,
    K_OUT_NBYTES,
    K_SHAPE_A,
    K_SHAPE_B,
    K_SHAPE_OUT,
    K_SRC_A_ADDR,
    K_SRC_A_SPACE,
    K_SRC_ADDR,
    K_SRC_B_ADDR,
    K_SRC_B_SPACE,
    K_SRC_SPACE,
};

_Static_assert((int)TRACE_OPINFO_K_BYTES == (int)K_BYTES &&
                   (int)TRACE_OPINFO_K_DIRECTION == (int)K_DIRECTION &&
                   (int)TRACE_OPINFO_K_DST_SPACE == (int)K_DST_SPACE &&
                   (int)TRACE_OPINFO_K_NBYTES == (int)K_NBYTES &&
                   (int)TRACE_OPINFO_K_SRC_SPACE == (int)K_SRC_SPACE,
               "opinfo.h's key positions");

/* Packed params (sim/chip/oppack.h) being read: the bytes, and room for the NUL-terminated
 * copies of the strings read from them (valid until the decode returns). */
struct pk {
    const uint8_t *p;
    size_t n;
    char buf[1024];
    size_t used;
    char **heap; /* owned: copies that did not fit buf */
    size_t nheap;
};

struct node {
    const struct sim_value *v;
    const cJSON *j;
    struct pk *pk; /* packed: the value at `at` of pk's bytes; text: its strings' copies */
    size_t at;
    const char *r; /* text: the value's first byte (struct trace_opinfo_text) */
};

enum src_kind { SRC_VALUE, SRC_JSON, SRC_PACKED, SRC_TEXT };

/* The details: their top level and their "replay" map. */
struct src {
    enum src_kind kind;
    const struct sim_value *d, *replay;
    const cJSON *top[TRACE_OPINFO_NKEYS], *rep[TRACE_OPINFO_NKEYS]; /* JSON: by key */
    struct pk *pk;
    size_t ptop[TRACE_OPINFO_NKEYS], prep[TRACE_OPINFO_NKEYS]; /* packed: positions by key */
    const struct trace_opinfo_text *text;
};

static bool n_none(struct node x)
{
    return !x.v && !x.j && !x.pk;
}

/* The node of key k's value in the text (set, at: its top or its replay's), or none. */
static struct node n_text(const struct src *s, uint64_t set, const uint32_t *at, enum key k)
{
    return set >> k & 1 ? (struct node){.pk = s->pk, .r = s->text->base + at[k]} : (struct node){0};
}

/*
 * Values of the text (struct trace_opinfo_text's contract: checked JSON without whitespace, escapes
 * or numbers other than short integers), read from their first byte alone.
 */

/* Past the value at r. */
static const char *text_end(const char *r)
{
    int depth = 0;
    do {
        char c = *r++;
        if (c == '"') {
            while (*r++ != '"')
                ;
        } else if (c == '[' || c == '{') {
            depth++;
        } else if (c == ']' || c == '}') {
            depth--;
        } else if (c != ',' && c != ':') { /* a number or a literal */
            while (*r != ',' && *r != ']' && *r != '}')
                r++;
        }
    } while (depth > 0);
    return r;
}

static bool text_is_int(const char *r)
{
    return *r == '-' || (*r >= '0' && *r <= '9');
}

static int64_t text_int(const char *r)
{
    bool neg = *r == '-';
    int64_t v = 0;
    for (r += neg; *r >= '0' && *r <= '9'; r++)
        v = v * 10 + (*r - '0');
    return neg ? -v : v;
}

static struct node n_slot(const struct src *s, const size_t *slots, enum key k)
{
    if (slots[k] == SIZE_MAX)
        return (struct node){0};
    return (struct node){.pk = s->pk, .at = slots[k]};
}

static struct node n_top(const struct src *s, enum key k)
{
    if (s->kind == SRC_JSON)
        return (struct node){.j = s->top[k]};
    if (s->kind == SRC_PACKED)
        return n_slot(s, s->ptop, k);
    if (s->kind == SRC_TEXT)
        return n_text(s, s->text->top_set, s->text->top, k);
    return (struct node){.v = sim_value_map_get(s->d, trace_opinfo_keys[k])};
}

static struct node n_rep(const struct src *s, enum key k)
{
    if (s->kind == SRC_JSON)
        return (struct node){.j = s->rep[k]};
    if (s->kind == SRC_PACKED)
        return n_slot(s, s->prep, k);
    if (s->kind == SRC_TEXT)
        return n_text(s, s->text->rep_set, s->text->rep, k);
    return (struct node){.v = sim_value_map_get(s->replay, trace_opinfo_keys[k])};
}

/* A JSON number as trace_json_to_value reads it: whole and in range, an int. */
static bool j_whole(const cJSON *j)
{
    double d = j->valuedouble;
    return d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0;
}

static bool n_is_int(struct node x)
{
    if (x.r)
        return text_is_int(x.r);
    if (x.pk)
        return sim_unpack_type(x.pk->p, x.pk->n, x.at) == SIM_V_INT;
    return x.v ? x.v->type == SIM_V_INT : x.j && cJSON_IsNumber(x.j) && j_whole(x.j);
}

static int64_t n_int(struct node x)
{
    if (x.r)
        return text_int(x.r);
    if (x.pk) {
        int64_t i = 0;
        sim_unpack_int_at(x.pk->p, x.pk->n, x.at, &i);
        return i;
    }
    return x.v ? x.v->u.i : (int64_t)x.j->valuedouble;
}

static bool n_is_float(struct node x)
{
    if (x.r)
        return false; /* a number of the text is an integer */
    if (x.pk)
        return sim_unpack_type(x.pk->p, x.pk->n, x.at) == SIM_V_FLOAT;
    return x.v ? x.v->type == SIM_V_FLOAT : x.j && cJSON_IsNumber(x.j) && !j_whole(x.j);
}

static double n_float(struct node x)
{
    if (x.pk) {
        double d = 0;
        sim_unpack_float_at(x.pk->p, x.pk->n, x.at, &d);
        return d;
    }
    return x.v ? x.v->u.f : x.j->valuedouble;
}

/* s[0, len) NUL-terminated in pk's room. */
static const char *pk_copy(struct pk *pk, const char *s, size_t len)
{
    char *c;
    if (len < sizeof(pk->buf) - pk->used) {
        c = pk->buf + pk->used;
        pk->used += len + 1;
    } else {
        c = sim_xmalloc(len + 1);
        pk->heap = sim_xreallocarray(pk->heap, pk->nheap + 1, sizeof(*pk->heap));
        pk->heap[pk->nheap++] = c;
    }
    memcpy(c, s, len);
    c[len] = '\0';
    return c;
}

/* A packed string, NUL-terminated in pk's room. */
static const char *pk_str(struct pk *pk, size_t at)
{
    const char *s;
    size_t len;
    if (!sim_unpack_str_at(pk->p, pk->n, at, &s, &len))
        return NULL;
    return pk_copy(pk, s, len);
}

static const char *n_str(struct node x)
{
    if (x.r)
        return *x.r == '"' ? pk_copy(x.pk, x.r + 1, (size_t)(text_end(x.r) - x.r) - 2) : NULL;
    if (x.pk)
        return pk_str(x.pk, x.at);
    if (x.v)
        return x.v->type == SIM_V_STR ? x.v->u.str.s : NULL;
    return x.j && cJSON_IsString(x.j) ? x.j->valuestring : NULL;
}

/* The length of a list, or -1 when x is not one. */
static ptrdiff_t n_len(struct node x)
{
    if (x.r) {
        if (*x.r != '[')
            return -1;
        ptrdiff_t n = 0;
        for (const char *p = x.r + 1; *p != ']'; n++) {
            p = text_end(p);
            p += *p == ',';
        }
        return n;
    }
    if (x.pk) {
        if (sim_unpack_type(x.pk->p, x.pk->n, x.at) != SIM_V_LIST)
            return -1;
        size_t at = x.at;
        return (ptrdiff_t)sim_unpack_list_open(x.pk->p, x.pk->n, &at);
    }
    if (x.v)
        return x.v->type == SIM_V_LIST ? (ptrdiff_t)x.v->u.list.len : -1;
    return x.j && cJSON_IsArray(x.j) ? cJSON_GetArraySize(x.j) : -1;
}

/* Item i of a list (i < n_len). */
static struct node n_item(struct node x, size_t i)
{
    if (x.r) {
        const char *p = x.r + 1;
        while (i--)
            p = text_end(p) + 1;
        return (struct node){.pk = x.pk, .r = p};
    }
    if (x.pk) {
        size_t at = x.at;
        sim_unpack_list_open(x.pk->p, x.pk->n, &at);
        while (i--)
            sim_unpack_skip(x.pk->p, x.pk->n, &at);
        return (struct node){.pk = x.pk, .at = at};
    }
    if (x.v)
        return (struct node){.v = x.v->u.list.items[i]};
    return (struct node){.j = cJSON_GetArrayItem(x.j, (int)i)};
}

/* The text of key k's value at the top, or else under replay when it is not at the top
 * (with str: when the top's is no string); NULL when neither. */
static const char *text_get(const struct src *d, enum key k, bool str)
{
    const struct trace_opinfo_text *t = d->text;
    if (t->top_set >> k & 1 && (!str || t->base[t->top[k]] == '"'))
        return t->base + t->top[k];
    if (t->rep_set >> k & 1 && (!str || t->base[t->rep[k]] == '"'))
        return t->base + t->rep[k];
    return NULL;
}

/* An integer of details, at the top or under "replay"; -1 when absent. */
static int64_t get_int(const struct src *d, enum key k)
{
    if (d->kind == SRC_TEXT) { /* an integer or no number, read once */
        const char *r = text_get(d, k, false);
        int64_t i = r && text_is_int(r) ? text_int(r) : -1;
        return i >= 0 ? i : -1;
    }
    struct node v = n_top(d, k);
    if (n_none(v))
        v = n_rep(d, k);
    if (n_is_int(v) && n_int(v) >= 0)
        return n_int(v);
    if (n_is_float(v) && n_float(v) >= 0 && n_float(v) < 9.2e18)
        return (int64_t)n_float(v);
    return -1;
}

static struct node get_any(const struct src *d, enum key k)
{
    struct node v = n_top(d, k);
    return n_none(v) ? n_rep(d, k) : v;
}

/* A string of details, at the top or else under "replay" (trace_details_str). */
static const char *get_str(const struct src *d, enum key k)
{
    /* (trace_opinfo_decode_text sets the fields the text kind reads alone) */
    if (d->kind == SRC_TEXT) { /* cppcheck-suppress ctuuninitvar */
        const char *r = text_get(d, k, true);
        return r ? pk_copy(d->pk, r + 1, (size_t)((const char *)rawmemchr(r + 1, '"') - r) - 1)
                 : NULL;
    }
    const char *s = n_str(n_top(d, k));
    return s ? s : n_str(n_rep(d, k));
}

/* Elements of a shape (a list of non-negative ints); 0 when it is not one. */
static uint64_t numel(struct node shape)
{
    ptrdiff_t len = n_len(shape);
    if (len < 0)
        return 0;
    uint64_t n = 1;
    for (size_t i = 0; i < (size_t)len; i++) {
        struct node x = n_item(shape, i);
        if (!n_is_int(x) || n_int(x) < 0)
            return 0;
        n *= (uint64_t)n_int(x);
    }
    return n;
}

/* Dimension i of a shape counted from the end (1: the last), or -1. */
static int64_t dim_from_end(struct node shape, size_t i)
{
    ptrdiff_t len = n_len(shape);
    if (len < 0 || (size_t)len < i)
        return -1;
    struct node x = n_item(shape, (size_t)len - i);
    return n_is_int(x) ? n_int(x) : -1;
}

static size_t dtype_bytes(const char *name)
{
    enum sim_dtype t;
    return name && sim_dtype_parse(name, &t) == 0 ? sim_dtype_size(t) : 0;
}

static void add_read(struct trace_opinfo *o, struct trace_spaces *sp, const char *space,
                     int64_t addr, uint64_t n)
{
    int id = space_id(sp, space);
    if (id < 0 || addr < 0 || !n || o->nreads == TRACE_OPINFO_MAX_READS)
        return;
    o->reads[o->nreads++] = (struct trace_range){(uint8_t)id, (uint64_t)addr, (uint64_t)addr + n};
}

static void set_write(struct trace_opinfo *o, struct trace_spaces *sp, const char *space,
                      int64_t addr, uint64_t n)
{
    int id = space_id(sp, space);
    if (id < 0 || addr < 0 || !n)
        return;
    o->has_write = true;
    o->write = (struct trace_range){(uint8_t)id, (uint64_t)addr, (uint64_t)addr + n};
}

static void gemm(const struct src *d, struct trace_spaces *sp, struct trace_opinfo *o, bool arith)
{
    struct node sa = get_any(d, K_SHAPE_A), sb = get_any(d, K_SHAPE_B);
    struct node so = get_any(d, K_SHAPE_OUT);
    const char *din = get_str(d, K_DTYPE_IN), *dout = get_str(d, K_DTYPE_OUT);
    int64_t m = get_int(d, K_M), n = get_int(d, K_N), k = get_int(d, K_K);
    if (m < 0 || n < 0 || k < 0) { /* a composite GEMM: from its shapes */
        m = dim_from_end(sa, 2), k = dim_from_end(sa, 1), n = dim_from_end(sb, 1);
    }
    if (arith && m >= 0 && n >= 0 && k >= 0)
        o->flops = 2.0 * (double)m * (double)n * (double)k;
    if (din)
        snprintf(o->dtype, sizeof(o->dtype), "%s", din);
    size_t ein = dtype_bytes(din), eout = dtype_bytes(dout ? dout : din);
    add_read(o, sp, get_str(d, K_SRC_A_SPACE), get_int(d, K_SRC_A_ADDR), numel(sa) * ein);
    add_read(o, sp, get_str(d, K_SRC_B_SPACE), get_int(d, K_SRC_B_ADDR), numel(sb) * ein);
    int64_t dst = get_int(d, K_DST_ADDR);
    uint64_t out = !n_none(so) ? numel(so) * eout : 0;
    if (!out && get_int(d, K_OUT_NBYTES) > 0)
        out = (uint64_t)get_int(d, K_OUT_NBYTES);
    if (dst < 0)
        dst = get_int(d, K_OUT_ADDR);
    set_write(o, sp, get_str(d, K_DST_SPACE), dst, out);
}

static void math(const struct src *d, struct trace_spaces *sp, struct trace_opinfo *o, bool arith)
{
    struct node addrs = get_any(d, K_INPUT_ADDRS), shapes = get_any(d, K_INPUT_SHAPES);
    struct node spaces = get_any(d, K_INPUT_SPACES), dtypes = get_any(d, K_INPUT_DTYPES);
    const char *dtype = get_str(d, K_DTYPE);
    ptrdiff_t na = n_len(addrs), ns = n_len(shapes), nsp = n_len(spaces), nt = n_len(dtypes);
    uint64_t in_elems = 0;
    for (ptrdiff_t i = 0; i < na; i++) {
        struct node a = n_item(addrs, (size_t)i);
        struct node sh = i < ns ? n_item(shapes, (size_t)i) : (struct node){0};
        struct node s = i < nsp ? n_item(spaces, (size_t)i) : (struct node){0};
        struct node t = i < nt ? n_item(dtypes, (size_t)i) : (struct node){0};
        uint64_t ne = numel(sh);
        in_elems = ne > in_elems ? ne : in_elems;
        if (!n_is_int(a))
            continue;
        size_t eb = dtype_bytes(n_str(t) ? n_str(t) : dtype);
        add_read(o, sp, n_str(s) ? n_str(s) : "tcm", n_int(a), ne * eb);
    }
    struct node so = get_any(d, K_SHAPE_OUT);
    uint64_t out = numel(so);
    bool reduction = n_is_int(get_any(d, K_AXIS));
    if (arith)
        o->flops = (double)(reduction && in_elems > out ? in_elems : out);
    if (arith && !o->flops && get_int(d, K_LENGTH) > 0) /* a spec trace's VE op */
        o->flops = (double)get_int(d, K_LENGTH);
    const char *dst_space = get_str(d, K_DST_SPACE);
    set_write(o, sp, dst_space ? dst_space : "tcm", get_int(d, K_DST_ADDR),
              out * dtype_bytes(dtype));
}

/* A TileToken stage (ADR-0052 D5): a GEMM or MATH stage's arithmetic and ranges as the op
 * it stands for; a DMA stage's bytes, with its ranges when it names them (an explicit
 * TileToken's; a composite op's stages carry sizes only). */
static void stage(const char *type, const struct src *d, struct trace_spaces *sp,
                  struct trace_opinfo *o)
{
    o->stage = true;
    if (strcmp(type, "GEMM") == 0) {
        gemm(d, sp, o, true);
    } else if (strcmp(type, "MATH") == 0) {
        math(d, sp, o, true);
    } else {
        int64_t nbytes = get_int(d, K_NBYTES);
        o->bytes = nbytes > 0 ? (uint64_t)nbytes : 0;
        add_read(o, sp, get_str(d, K_SRC_SPACE), get_int(d, K_SRC_ADDR), o->bytes);
        set_write(o, sp, get_str(d, K_DST_SPACE), get_int(d, K_DST_ADDR), o->bytes);
    }
}

static void decode(const char *op, enum trace_op_kind kind, const struct src *details,
                   struct trace_spaces *sp, struct trace_opinfo *o)
{
    bool arith = kind == TRACE_KIND_GEMM || kind == TRACE_KIND_MATH;
    /* a spec trace's DMA: direction, bytes and the DRAM address */
    const char *dir = get_str(details, K_DIRECTION);
    int64_t bytes = get_int(details, K_BYTES);
    if (dir && bytes >= 0 && get_int(details, K_NBYTES) < 0) {
        o->bytes = (uint64_t)bytes;
        if (strcmp(dir, "read") == 0)
            add_read(o, sp, "hbm", get_int(details, K_DRAM_ADDR), o->bytes);
        else if (strcmp(dir, "write") == 0)
            set_write(o, sp, "hbm", get_int(details, K_DRAM_ADDR), o->bytes);
        return;
    }
    int64_t nbytes = get_int(details, K_NBYTES);
    if (strncmp(op, "TileToken/", 10) == 0) {
        stage(op + 10, details, sp, o);
        return;
    }
    if (strcmp(op, "dma_read") == 0) {
        o->bytes = nbytes > 0 ? (uint64_t)nbytes : 0;
        const char *src = get_str(details, K_SRC_SPACE);
        add_read(o, sp, src ? src : "hbm", get_int(details, K_SRC_ADDR), o->bytes);
        set_write(o, sp, get_str(details, K_DST_SPACE), get_int(details, K_DST_ADDR), o->bytes);
    } else if (strcmp(op, "dma_write") == 0 || strcmp(op, "ipcq_copy") == 0) {
        o->bytes = nbytes > 0 ? (uint64_t)nbytes : 0;
        const char *dst = get_str(details, K_DST_SPACE);
        add_read(o, sp, get_str(details, K_SRC_SPACE), get_int(details, K_SRC_ADDR), o->bytes);
        set_write(o, sp, dst ? dst : "hbm", get_int(details, K_DST_ADDR), o->bytes);
    } else if (kind == TRACE_KIND_GEMM || strncmp(op, "gemm", 4) == 0 ||
               strcmp(op, "composite_gemm") == 0) {
        gemm(details, sp, o, arith);
    } else if (kind == TRACE_KIND_MATH && strncmp(op, "composite_", 10) == 0) {
        /* a composite math op: its output in HBM (its input is a replay annotation) */
        set_write(o, sp, "hbm", get_int(details, K_OUT_ADDR),
                  get_int(details, K_OUT_NBYTES) > 0 ? (uint64_t)get_int(details, K_OUT_NBYTES)
                                                     : 0);
    } else if (kind == TRACE_KIND_MATH) {
        math(details, sp, o, arith);
    } else if (nbytes > 0) {
        o->bytes = (uint64_t)nbytes;
    }
}

void trace_opinfo_decode(const char *op, enum trace_op_kind kind, const struct sim_value *details,
                         struct trace_spaces *sp, struct trace_opinfo *o)
{
    memset(o, 0, sizeof(*o));
    if (!details || details->type != SIM_V_MAP || !op)
        return;
    struct src s = {.kind = SRC_VALUE,
                    .d = details,
                    .replay = sim_value_map_get(details, TRACE_DETAILS_REPLAY)};
    decode(op, kind, &s, sp, o);
}

/* The position of the len bytes of key (no NUL among them) in trace_opinfo_keys, or -1. */
/* key_of_n's table: the keys' positions by a hash of their length and first and last
 * bytes, open addressing, built once. Hand-rolled in place of a binary search with strncmp:
 * that search was some 8% of a trace's load (perf, 10 M events). */
enum { KEY_HASH = 128, KEY_NONE = UINT8_MAX /* an empty slot */ };
static uint8_t key_hash[KEY_HASH];
static uint8_t key_len[TRACE_OPINFO_NKEYS];
static uint64_t key_word[TRACE_OPINFO_NKEYS][2]; /* each key's bytes, zero past its end */
static pthread_once_t key_hash_once = PTHREAD_ONCE_INIT;
static atomic_bool key_hash_ready; /* built: pthread_once's call is skipped */

static unsigned key_slot(const char *k, size_t len)
{
    return (unsigned)(len * 7 + (unsigned char)k[0] * 3 + (unsigned char)k[len - 1]) &
           (KEY_HASH - 1);
}

static void key_hash_build(void)
{
    memset(key_hash, KEY_NONE, sizeof(key_hash));
    for (int i = 0; i < TRACE_OPINFO_NKEYS; i++) {
        key_len[i] = (uint8_t)strlen(trace_opinfo_keys[i]);
        char pad[16] = {0};
        memcpy(pad, trace_opinfo_keys[i], key_len[i] < 16 ? key_len[i] : 16);
        memcpy(key_word[i], pad, 16);
        unsigned s = key_slot(trace_opinfo_keys[i], key_len[i]);
        while (key_hash[s] != KEY_NONE)
            s = (s + 1) & (KEY_HASH - 1);
        key_hash[s] = (uint8_t)i;
    }
}

/* key[0, len) == key i, for a key with 16 bytes readable from it: two words compared, not a
 * call of memcmp (it was a twentieth of the thread that parses a trace ahead, perf). */
static bool key_is(int i, const char *key, size_t len)
{
    uint64_t a[2];
    memcpy(a, key, 16);
    uint64_t m0 = len >= 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * len)) - 1;
    uint64_t m1 = len >= 16 ? ~(uint64_t)0 : len <= 8 ? 0 : ((uint64_t)1 << (8 * (len - 8))) - 1;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    m0 = __builtin_bswap64(m0), m1 = __builtin_bswap64(m1);
#endif
    return ((a[0] & m0) ^ key_word[i][0]) == 0 && ((a[1] & m1) ^ key_word[i][1]) == 0;
}

/* The position in trace_opinfo_keys of the key key[0, len), or -1; end: the end of the
 * bytes readable from key (NULL: only len). */
static int key_of_n_in(const char *key, size_t len, const char *end)
{
    if (!len)
        return -1;
    if (!atomic_load_explicit(&key_hash_ready, memory_order_acquire)) {
        pthread_once(&key_hash_once, key_hash_build);
        atomic_store_explicit(&key_hash_ready, true, memory_order_release);
    }
    bool words = end && end - key >= 16 && len <= 16;
    for (unsigned s = key_slot(key, len); key_hash[s] != KEY_NONE; s = (s + 1) & (KEY_HASH - 1)) {
        int i = key_hash[s];
        if (key_len[i] == len &&
            (words ? key_is(i, key, len) : memcmp(trace_opinfo_keys[i], key, len) == 0))
            return i;
    }
    return -1;
}

/* The position in trace_opinfo_keys of the key key[0, len), or -1. */
static int key_of_n(const char *key, size_t len)
{
    return key_of_n_in(key, len, NULL);
}

/* The keys of object j into slots (the first of a duplicated key, as trace_json_to_value);
 * the first "replay" into *replay when asked. */
static void slot_keys(const cJSON *j, const cJSON **slots, const cJSON **replay)
{
    for (const cJSON *c = j->child; c; c = c->next) {
        const char *k = c->string ? c->string : "";
        if (replay && k[0] == TRACE_DETAILS_REPLAY[0] && strcmp(k, TRACE_DETAILS_REPLAY) == 0) {
            if (!*replay)
                *replay = c;
            continue;
        }
        int at = key_of_n(k, strlen(k));
        if (at >= 0 && !slots[at])
            slots[at] = c;
    }
}

void trace_opinfo_decode_json(const char *op, enum trace_op_kind kind, const cJSON *details,
                              struct trace_spaces *sp, struct trace_opinfo *o)
{
    memset(o, 0, sizeof(*o));
    if (!cJSON_IsObject(details) || !op)
        return;
    struct src s = {.kind = SRC_JSON};
    const cJSON *replay = NULL;
    slot_keys(details, s.top, &replay);
    if (replay && cJSON_IsObject(replay))
        slot_keys(replay, s.rep, NULL);
    decode(op, kind, &s, sp, o);
}

void trace_opinfo_decode_text(const char *op, enum trace_op_kind kind,
                              const struct trace_opinfo_text *d, struct trace_spaces *sp,
                              struct trace_opinfo *o)
{
    memset(o, 0, sizeof(*o));
    if (!d || !op)
        return;
    /* what the text kind reads alone, set: neither the strings' copies' 1 KiB of room nor
     * the other kinds' slots (900 bytes) cleared for every op of a load (the clearing was
     * most of this function's 1.4% of a load, perf, 10 M events) */
    struct pk pk;
    pk.used = 0, pk.heap = NULL, pk.nheap = 0;
    struct src s;
    s.kind = SRC_TEXT, s.text = d, s.pk = &pk;
    decode(op, kind, &s, sp, o);
    for (size_t i = 0; i < pk.nheap; i++)
        free(pk.heap[i]);
    free(pk.heap);
}

int trace_opinfo_key(const char *k, size_t len)
{
    return key_of_n(k, len);
}

int trace_opinfo_key_in(const char *k, size_t len, const char *end)
{
    return key_of_n_in(k, len, end);
}

/* The keys of the packed map at *pos into slots by their position in trace_opinfo_keys
 * (the last of a repeated key, as unpacking it into a tree keeps), advancing past it. A
 * key is read up to a NUL, as the tree's key would be. */
/* The keys of the packed table this decoder reads, by their id (position + 1; 0: not read). */
static const uint8_t pack_key[SIM_PK_COUNT] = {
    [SIM_PK_SRC_ADDR] = K_SRC_ADDR + 1,
    [SIM_PK_NBYTES] = K_NBYTES + 1,
    [SIM_PK_SRC_SPACE] = K_SRC_SPACE + 1,
    [SIM_PK_DTYPE] = K_DTYPE + 1,
    [SIM_PK_DST_SPACE] = K_DST_SPACE + 1,
    [SIM_PK_DST_ADDR] = K_DST_ADDR + 1,
    [SIM_PK_SRC_A_ADDR] = K_SRC_A_ADDR + 1,
    [SIM_PK_SRC_B_ADDR] = K_SRC_B_ADDR + 1,
    [SIM_PK_SHAPE_A] = K_SHAPE_A + 1,
    [SIM_PK_SHAPE_B] = K_SHAPE_B + 1,
    [SIM_PK_SHAPE_OUT] = K_SHAPE_OUT + 1,
    [SIM_PK_DTYPE_IN] = K_DTYPE_IN + 1,
    [SIM_PK_DTYPE_OUT] = K_DTYPE_OUT + 1,
    [SIM_PK_M] = K_M + 1,
    [SIM_PK_K] = K_K + 1,
    [SIM_PK_N] = K_N + 1,
    [SIM_PK_SRC_A_SPACE] = K_SRC_A_SPACE + 1,
    [SIM_PK_SRC_B_SPACE] = K_SRC_B_SPACE + 1,
    [SIM_PK_INPUT_ADDRS] = K_INPUT_ADDRS + 1,
    [SIM_PK_INPUT_SHAPES] = K_INPUT_SHAPES + 1,
    [SIM_PK_INPUT_SPACES] = K_INPUT_SPACES + 1,
    [SIM_PK_INPUT_DTYPES] = K_INPUT_DTYPES + 1,
    [SIM_PK_AXIS] = K_AXIS + 1,
    [SIM_PK_OUT_ADDR] = K_OUT_ADDR + 1,
    [SIM_PK_OUT_NBYTES] = K_OUT_NBYTES + 1,
};

static void slot_packed(const uint8_t *p, size_t n, size_t *pos, size_t *slots)
{
    size_t items = sim_unpack_map_open(p, n, pos);
    for (size_t i = 0; i < items; i++) {
        size_t klen;
        const char *k;
        int id = sim_unpack_key_id(p, n, pos, &k, &klen);
        int at = id >= 0 ? pack_key[id] - 1 : key_of_n(k, strnlen(k, klen));
        if (at >= 0)
            slots[at] = *pos;
        sim_unpack_skip(p, n, pos);
    }
}

void trace_opinfo_decode_packed(const char *op, enum trace_op_kind kind, const uint8_t *packed,
                                size_t len, struct trace_spaces *sp, struct trace_opinfo *o)
{
    memset(o, 0, sizeof(*o));
    if (!op || !packed || !len || sim_unpack_type(packed, len, 0) != SIM_V_MAP)
        return;
    struct pk pk = {.p = packed, .n = len};
    struct src s = {.kind = SRC_PACKED, .pk = &pk};
    for (size_t i = 0; i < TRACE_OPINFO_NKEYS; i++)
        s.ptop[i] = s.prep[i] = SIZE_MAX;
    size_t pos = 0;
    slot_packed(packed, len, &pos, s.ptop);
    if (pos < len && sim_unpack_type(packed, len, pos) == SIM_V_MAP)
        slot_packed(packed, len, &pos, s.prep);
    decode(op, kind, &s, sp, o);
    for (size_t i = 0; i < pk.nheap; i++)
        free(pk.heap[i]);
    free(pk.heap);
}

/* ---- op columns -------------------------------------------------------------------------- */

enum {
    PK_STAGE = 1 << 0,
    PK_WRITE = 1 << 1,
    PK_FLOPS = 1 << 2,     /* flops as a whole number */
    PK_FLOPS_RAW = 1 << 3, /* flops as the bytes of a double */
    PK_BYTES = 1 << 4,
    PK_DTYPE = 1 << 5,
    PK_READS_SHIFT = 6, /* nreads in the next byte */
};

static uint8_t *put_var(uint8_t *p, uint64_t x)
{
    while (x >= 0x80) {
        *p++ = (uint8_t)(x | 0x80);
        x >>= 7;
    }
    *p++ = (uint8_t)x;
    return p;
}

static inline bool get_var(const uint8_t **p, const uint8_t *end, uint64_t *x)
{
    if (*p < end && !(**p & 0x80)) { /* one byte: most lengths and ids */
        *x = *(*p)++;
        return true;
    }
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (end - *p >= 8) { /* up to eight bytes (an address): their groups of 7 bits at once */
        uint64_t w;
        memcpy(&w, *p, sizeof(w));
        uint64_t last = ~w & 0x8080808080808080ull; /* the bytes that end a number */
        if (last) {
            unsigned len = (unsigned)__builtin_ctzll(last) / 8 + 1;
            uint64_t v = w & 0x7f7f7f7f7f7f7f7full;
            if (len < 8)
                v &= ((uint64_t)1 << (8 * len)) - 1;
            v = (v & 0x007f007f007f007full) | (v & 0x7f007f007f007f00ull) >> 1;
            v = (v & 0x00003fff00003fffull) | (v & 0x3fff00003fff0000ull) >> 2;
            v = (v & 0x000000000fffffffull) | (v & 0x0fffffff00000000ull) >> 4;
            *x = v;
            *p += len;
            return true;
        }
    }
#endif
    uint64_t v = 0;
    for (unsigned sh = 0; *p < end && sh < 64; sh += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << sh;
        if (!(b & 0x80)) {
            *x = v;
            return true;
        }
    }
    return false;
}

/* A range: its space's name interned in m (once for each space: interning a string again
 * changes nothing), its start and length. */
static uint8_t *put_range(uint8_t *p, struct trace_model *m, struct trace_spaces *sp,
                          const struct trace_range *r)
{
    if (sp->intern_m != m) {
        sp->intern_m = m;
        memset(sp->intern1, 0, sizeof(sp->intern1));
    }
    uint32_t name;
    if (r->space < sp->n && sp->intern1[r->space]) {
        name = sp->intern1[r->space] - 1;
    } else {
        const char *s = r->space < sp->n ? sp->names[r->space] : "";
        name = trace_model_intern(m, s, strlen(s));
        if (r->space < sp->n)
            sp->intern1[r->space] = name + 1;
    }
    p = put_var(p, name);
    p = put_var(p, r->lo);
    return put_var(p, r->hi - r->lo);
}

size_t trace_opinfo_pack(struct trace_model *m, const struct trace_opinfo *o,
                         struct trace_spaces *sp, uint8_t *buf)
{
    uint8_t *p = buf + 2;
    uint8_t f = 0;
    f |= o->stage ? PK_STAGE : 0;
    f |= o->has_write ? PK_WRITE : 0;
    if (o->flops != 0) {
        if (o->flops > 0 && o->flops < 9.2e18 && o->flops == floor(o->flops)) {
            f |= PK_FLOPS;
            p = put_var(p, (uint64_t)o->flops);
        } else {
            f |= PK_FLOPS_RAW;
            memcpy(p, &o->flops, sizeof(o->flops));
            p += sizeof(o->flops);
        }
    }
    if (o->bytes) {
        f |= PK_BYTES;
        p = put_var(p, o->bytes);
    }
    size_t dl = strnlen(o->dtype, sizeof(o->dtype) - 1);
    if (dl) {
        f |= PK_DTYPE;
        *p++ = (uint8_t)dl;
        memcpy(p, o->dtype, dl);
        p += dl;
    }
    for (unsigned r = 0; r < o->nreads; r++)
        p = put_range(p, m, sp, &o->reads[r]);
    if (o->has_write)
        p = put_range(p, m, sp, &o->write);
    buf[0] = f;
    buf[1] = (uint8_t)o->nreads;
    return (size_t)(p - buf);
}

/* space_id of the model's string name, through sp's cache of the last few. */
static int space_of_str(struct trace_spaces *sp, const struct trace_model *m, uint32_t name)
{
    if (sp->cache_m != m)
        sp->cache_m = m, sp->ncache = 0;
    for (unsigned i = 0; i < sp->ncache; i++)
        if (sp->cache_str[i] == name)
            return sp->cache_id[i];
    int id = space_id(sp, trace_model_str(m, name));
    if (sp->ncache < sizeof(sp->cache_str) / sizeof(sp->cache_str[0])) {
        sp->cache_str[sp->ncache] = name;
        sp->cache_id[sp->ncache++] = id;
    }
    return id;
}

/* nstr: m's trace_model_str_count. Inlined in the loops of the readers of columns (called,
 * it cost a read of ten million ops a tenth more). */
static inline __attribute__((always_inline)) bool
get_range(const struct trace_model *m, uint32_t nstr, const uint8_t **p, const uint8_t *end,
          struct trace_spaces *sp, struct trace_range *r, bool *ok)
{
    uint64_t name, lo, len;
    if (!get_var(p, end, &name) || !get_var(p, end, &lo) || !get_var(p, end, &len) || name >= nstr)
        return false;
    int id = space_of_str(sp, m, (uint32_t)name);
    *ok = id >= 0;
    *r = (struct trace_range){(uint8_t)(id < 0 ? 0 : id), lo, lo + len};
    return true;
}

/* The fields before the ranges (flops, bytes, dtype, as the flags f say) from *p: into
 * flops, bytes and dtype (a char[8]) where not NULL, skipped where NULL. False when
 * malformed. */
static inline __attribute__((always_inline)) bool get_head(uint8_t f, const uint8_t **pp,
                                                           const uint8_t *end, double *flops,
                                                           uint64_t *bytes, char *dtype)
{
    const uint8_t *p = *pp;
    uint64_t x;
    if (f & PK_FLOPS) {
        if (!get_var(&p, end, &x))
            return false;
        if (flops)
            *flops = (double)x;
    } else if (f & PK_FLOPS_RAW) {
        if (end - p < (ptrdiff_t)sizeof(double))
            return false;
        if (flops)
            memcpy(flops, p, sizeof(double));
        p += sizeof(double);
    }
    if (f & PK_BYTES) {
        if (!get_var(&p, end, &x))
            return false;
        if (bytes)
            *bytes = x;
    }
    if (f & PK_DTYPE) {
        if (p == end || *p >= sizeof(((struct trace_opinfo *)NULL)->dtype) || end - p - 1 < *p)
            return false;
        if (dtype)
            memcpy(dtype, p + 1, *p);
        p += 1 + *p;
    }
    *pp = p;
    return true;
}

bool trace_opinfo_unpack(const struct trace_model *m, const uint8_t *p, size_t n,
                         struct trace_spaces *sp, struct trace_opinfo *o)
{
    /* cleared in a few wide stores (a memset of its size starts a slow string store: a
     * tenth of the time of a read of ten million ops' columns) */
    static const struct trace_opinfo none;
    memcpy(o, &none, sizeof(*o));
    const uint8_t *end = p + n;
    if (n < 2 || p[1] > TRACE_OPINFO_MAX_READS)
        return false;
    uint8_t f = p[0];
    unsigned nreads = p[1];
    p += 2;
    uint32_t nstr = nreads || (f & PK_WRITE) ? trace_model_str_count(m) : 0;
    o->stage = f & PK_STAGE;
    if (!get_head(f, &p, end, &o->flops, &o->bytes, o->dtype))
        return false;
    for (unsigned r = 0; r < nreads; r++) {
        bool ok;
        if (!get_range(m, nstr, &p, end, sp, &o->reads[o->nreads], &ok))
            return false;
        o->nreads += ok;
    }
    if (f & PK_WRITE) {
        bool ok;
        if (!get_range(m, nstr, &p, end, sp, &o->write, &ok))
            return false;
        o->has_write = ok;
    }
    return p == end;
}

bool trace_opinfo_unpack_ranges(const struct trace_model *m, const uint8_t *p, size_t n,
                                struct trace_spaces *sp, struct trace_op_ranges *r)
{
    const uint8_t *end = p + n;
    r->nreads = 0;
    r->has_write = false;
    if (n < 2 || p[1] > TRACE_OPINFO_MAX_READS)
        return false;
    uint8_t f = p[0];
    unsigned nreads = p[1];
    p += 2;
    uint32_t nstr = nreads || (f & PK_WRITE) ? trace_model_str_count(m) : 0;
    if (!get_head(f, &p, end, NULL, NULL, NULL))
        return false;
    for (unsigned i = 0; i < nreads; i++) {
        bool ok;
        if (!get_range(m, nstr, &p, end, sp, &r->reads[r->nreads], &ok))
            return false;
        r->nreads += ok;
    }
    if (f & PK_WRITE) {
        bool ok;
        if (!get_range(m, nstr, &p, end, sp, &r->write, &ok))
            return false;
        r->has_write = ok;
    }
    return p == end;
}

/* A range's name, start and end (range x of r), as get_range reads them before it looks
 * the name up. */
static inline __attribute__((always_inline)) bool get_raw_range(uint32_t nstr, const uint8_t **p,
                                                                const uint8_t *end,
                                                                struct trace_opinfo_raw *r,
                                                                unsigned x)
{
    uint64_t name, lo, len;
    if (!get_var(p, end, &name) || !get_var(p, end, &lo) || !get_var(p, end, &len) || name >= nstr)
        return false;
    r->name[x] = (uint32_t)name;
    r->lohi[x][0] = lo, r->lohi[x][1] = lo + len;
    return true;
}

bool trace_opinfo_unpack_raw(const struct trace_model *m, const uint8_t *p, size_t n,
                             struct trace_opinfo_raw *r)
{
    r->flops = 0, r->bytes = 0;
    memset(r->dtype, 0, sizeof(r->dtype));
    r->nreads = 0;
    r->has_write = false;
    const uint8_t *end = p + n;
    if (n < 2 || p[1] > TRACE_OPINFO_MAX_READS)
        return false;
    uint8_t f = p[0];
    unsigned nreads = p[1];
    p += 2;
    uint32_t nstr = nreads || (f & PK_WRITE) ? trace_model_str_count(m) : 0;
    r->stage = f & PK_STAGE;
    if (!get_head(f, &p, end, &r->flops, &r->bytes, r->dtype))
        return false;
    for (unsigned i = 0; i < nreads; i++)
        if (!get_raw_range(nstr, &p, end, r, 1 + i))
            return false;
    r->nreads = (uint8_t)nreads;
    if (f & PK_WRITE) {
        if (!get_raw_range(nstr, &p, end, r, 0))
            return false;
        r->has_write = true;
    }
    return p == end;
}

void trace_opinfo_resolve(const struct trace_model *m, const struct trace_opinfo_raw *r,
                          struct trace_spaces *sp, struct trace_opinfo *o)
{
    static const struct trace_opinfo none; /* cleared as trace_opinfo_unpack clears it */
    memcpy(o, &none, sizeof(*o));
    o->flops = r->flops;
    o->bytes = r->bytes;
    memcpy(o->dtype, r->dtype, sizeof(o->dtype));
    o->stage = r->stage;
    for (unsigned i = 1; i <= r->nreads; i++) { /* as get_range: a name of no id, no range */
        int id = space_of_str(sp, m, r->name[i]);
        o->reads[o->nreads] =
            (struct trace_range){(uint8_t)(id < 0 ? 0 : id), r->lohi[i][0], r->lohi[i][1]};
        o->nreads += id >= 0;
    }
    if (r->has_write) {
        int id = space_of_str(sp, m, r->name[0]);
        o->write = (struct trace_range){(uint8_t)(id < 0 ? 0 : id), r->lohi[0][0], r->lohi[0][1]};
        o->has_write = id >= 0;
    }
}

int trace_opinfo_space_of(const struct trace_model *m, struct trace_spaces *sp, uint32_t name)
{
    return space_of_str(sp, m, name);
}

/* The id of name among the n known, or -1. */
static int known_id(uint32_t name, const uint32_t *names, const uint8_t *ids, unsigned n)
{
    for (unsigned k = 0; k < n; k++)
        if (names[k] == name)
            return ids[k];
    return -1;
}

bool trace_opinfo_resolve_known(const struct trace_opinfo_raw *r, const uint32_t *names,
                                const uint8_t *ids, unsigned n, struct trace_opinfo *o)
{
    int id[1 + TRACE_OPINFO_MAX_READS];
    for (unsigned i = r->has_write ? 0 : 1; i <= r->nreads; i++)
        if ((id[i] = known_id(r->name[i], names, ids, n)) < 0)
            return false;
    static const struct trace_opinfo none;
    memcpy(o, &none, sizeof(*o));
    o->flops = r->flops;
    o->bytes = r->bytes;
    memcpy(o->dtype, r->dtype, sizeof(o->dtype));
    o->stage = r->stage;
    for (unsigned i = 1; i <= r->nreads; i++)
        o->reads[i - 1] = (struct trace_range){(uint8_t)id[i], r->lohi[i][0], r->lohi[i][1]};
    o->nreads = r->nreads;
    if (r->has_write) {
        o->write = (struct trace_range){(uint8_t)id[0], r->lohi[0][0], r->lohi[0][1]};
        o->has_write = true;
    }
    return true;
}

void trace_opinfo_store(struct trace_model *m, uint64_t ev, const struct trace_opinfo *o,
                        struct trace_spaces *sp)
{
    if (sp->n == TRACE_OPINFO_MAX_SPACES)
        return; /* a space may have found no room: its details are read when asked */
    uint8_t buf[TRACE_OPCOL_MAX];
    size_t n = trace_opinfo_pack(m, o, sp, buf);
    trace_model_set_opcol(m, ev, buf, n);
}

/* A fresh registry of pre's: the standard names alone (space_id reads nothing else), not
 * the whole of it cleared. */
static void pre_spaces(struct trace_spaces *sp)
{
    static const char std[3][sizeof(sp->names[0])] = {"hbm", "tcm", "sram"};
    memcpy(sp->names, std, sizeof(std));
    sp->n = 3;
    sp->cache_m = NULL;
    sp->ncache = 0;
}

void trace_opinfo_decode_pre(const char *op, enum trace_op_kind kind, const cJSON *details,
                             struct trace_opinfo_pre *pre)
{
    pre_spaces(&pre->sp);
    trace_opinfo_decode_json(op, kind, details, &pre->sp, &pre->o);
}

void trace_opinfo_decode_text_pre(const char *op, enum trace_op_kind kind,
                                  const struct trace_opinfo_text *d, struct trace_opinfo_pre *pre)
{
    pre_spaces(&pre->sp);
    trace_opinfo_decode_text(op, kind, d, &pre->sp, &pre->o);
}

/*
 * The decode with sp would have met the same names in the same order: those new to sp are
 * registered as it would have registered them. While sp has room, each of pre's names has
 * an id in sp, and every range kept with pre's registry is kept with sp's (a name gets no
 * id, in either, only when it is empty or too long). Once sp is full nothing is stored:
 * whatever a full registry would have dropped is not seen. pre's own registry full means
 * sp is too (the three standard names and thirteen others).
 */
void trace_opinfo_store_pre(struct trace_model *m, uint64_t ev, const struct trace_opinfo_pre *pre,
                            struct trace_spaces *sp)
{
    uint8_t map[TRACE_OPINFO_MAX_SPACES] = {0, 1, 2};
    for (unsigned i = 3; i < pre->sp.n; i++) {
        int id = space_id(sp, pre->sp.names[i]);
        map[i] = (uint8_t)(id < 0 ? 0 : id);
    }
    if (sp->n == TRACE_OPINFO_MAX_SPACES)
        return;
    struct trace_opinfo o = pre->o;
    for (unsigned r = 0; r < o.nreads; r++)
        o.reads[r].space = map[o.reads[r].space];
    if (o.has_write)
        o.write.space = map[o.write.space];
    trace_opinfo_store(m, ev, &o, sp);
}

bool trace_opinfo_cached(const struct trace_model *m, uint64_t ev)
{
    return trace_model_has_opcol(m, ev);
}

void trace_opinfo_of_event(const struct trace_model *m, uint64_t ev, struct trace_spaces *sp,
                           struct trace_opinfo *o)
{
    size_t n;
    const uint8_t *p = trace_model_opcol(m, ev, &n);
    if (p && trace_opinfo_unpack(m, p, n, sp, o))
        return;
    const struct trace_event *e = trace_model_event(m, ev);
    size_t len;
    uint8_t *packed = trace_model_event_packed(m, ev, &len);
    if (packed) { /* a live op's: read in place rather than expanded into a tree */
        trace_opinfo_decode_packed(trace_model_str(m, e->op), (enum trace_op_kind)e->op_kind,
                                   packed, len, sp, o);
        free(packed);
        return;
    }
    struct sim_value *d = trace_model_event_details(m, ev);
    trace_opinfo_decode(trace_model_str(m, e->op), (enum trace_op_kind)e->op_kind, d, sp, o);
    sim_value_free(d);
}
