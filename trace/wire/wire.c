/*
 * The wire encoding (see wire.h): frames and primitives. The reader never trusts a length:
 * each one is compared with what is left of the frame before anything is allocated, and
 * a count of items must fit the bytes left at one byte per item at least.
 */
#include "trace/wire/wire.h"

#include "sim/util/xalloc.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* Value tree tags. */
enum {
    TAG_NULL,
    TAG_FALSE,
    TAG_TRUE,
    TAG_INT,
    TAG_FLOAT,
    TAG_STR,
    TAG_LIST,
    TAG_MAP,
};

/* ---- writing ---------------------------------------------------------------------------- */

void trace_wire_buf_fini(struct trace_wire_buf *b)
{
    free(b->p);
    *b = (struct trace_wire_buf){0};
}

void trace_wire_buf_consume(struct trace_wire_buf *b, size_t n)
{
    assert(n <= b->len);
    memmove(b->p, b->p + n, b->len - n);
    b->len -= n;
}

static uint8_t *room(struct trace_wire_buf *b, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        b->p = sim_xrealloc(b->p, cap);
        b->cap = cap;
    }
    uint8_t *p = b->p + b->len;
    b->len += n;
    return p;
}

size_t trace_wire_frame_begin(struct trace_wire_buf *b, uint8_t type)
{
    size_t start = b->len;
    uint8_t *p = room(b, TRACE_WIRE_HEADER);
    memset(p, 0, 4);
    p[4] = type;
    return start;
}

size_t trace_wire_frame_end(struct trace_wire_buf *b, size_t start)
{
    size_t n = b->len - start;
    assert(n >= TRACE_WIRE_HEADER && n - 4 <= UINT32_MAX);
    uint32_t len = (uint32_t)(n - 4);
    uint8_t *p = b->p + start;
    p[0] = (uint8_t)len;
    p[1] = (uint8_t)(len >> 8);
    p[2] = (uint8_t)(len >> 16);
    p[3] = (uint8_t)(len >> 24);
    return n;
}

void trace_wire_put_u8(struct trace_wire_buf *b, uint8_t v)
{
    *room(b, 1) = v;
}

void trace_wire_put_u16(struct trace_wire_buf *b, uint16_t v)
{
    uint8_t *p = room(b, 2);
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

void trace_wire_put_uv(struct trace_wire_buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        uint8_t byte = v & 0x7F;
        v >>= 7;
        tmp[n++] = byte | (v ? 0x80 : 0);
    } while (v);
    memcpy(room(b, n), tmp, n);
}

void trace_wire_put_sv(struct trace_wire_buf *b, int64_t v)
{
    trace_wire_put_uv(b, ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0));
}

void trace_wire_put_f64(struct trace_wire_buf *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    uint8_t *p = room(b, 8);
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(u >> (8 * i));
}

void trace_wire_put_raw(struct trace_wire_buf *b, const void *p, size_t n)
{
    if (n)
        memcpy(room(b, n), p, n);
}

void trace_wire_put_bytes(struct trace_wire_buf *b, const void *p, size_t n)
{
    trace_wire_put_uv(b, n);
    trace_wire_put_raw(b, p, n);
}

void trace_wire_put_str(struct trace_wire_buf *b, const char *s)
{
    trace_wire_put_bytes(b, s ? s : "", s ? strlen(s) : 0);
}

void trace_wire_put_value(struct trace_wire_buf *b, const struct sim_value *v)
{
    if (!v) {
        trace_wire_put_u8(b, TAG_NULL);
        return;
    }
    switch (v->type) {
    case SIM_V_BOOL: trace_wire_put_u8(b, v->u.b ? TAG_TRUE : TAG_FALSE); return;
    case SIM_V_INT:
        trace_wire_put_u8(b, TAG_INT);
        trace_wire_put_sv(b, v->u.i);
        return;
    case SIM_V_FLOAT:
        trace_wire_put_u8(b, TAG_FLOAT);
        trace_wire_put_f64(b, v->u.f);
        return;
    case SIM_V_STR:
        trace_wire_put_u8(b, TAG_STR);
        trace_wire_put_bytes(b, v->u.str.s, v->u.str.len);
        return;
    case SIM_V_LIST:
        trace_wire_put_u8(b, TAG_LIST);
        trace_wire_put_uv(b, v->u.list.len);
        for (size_t i = 0; i < v->u.list.len; i++)
            trace_wire_put_value(b, v->u.list.items[i]);
        return;
    case SIM_V_MAP:
        trace_wire_put_u8(b, TAG_MAP);
        trace_wire_put_uv(b, v->u.map.len);
        for (size_t i = 0; i < v->u.map.len; i++) {
            trace_wire_put_str(b, v->u.map.keys[i]);
            trace_wire_put_value(b, v->u.map.vals[i]);
        }
        return;
    case SIM_V_NULL:
    case SIM_V_TENSOR: break;
    }
    trace_wire_put_u8(b, TAG_NULL);
}

/* ---- reading ---------------------------------------------------------------------------- */

void trace_wire_rd_init(struct trace_wire_rd *r, const void *p, size_t n)
{
    *r = (struct trace_wire_rd){.p = p, .n = n};
}

bool trace_wire_rd_ok(const struct trace_wire_rd *r)
{
    return !r->what;
}

bool trace_wire_rd_fail(struct trace_wire_rd *r, const char *what)
{
    if (!r->what)
        r->what = what;
    r->pos = r->n; /* nothing more is read */
    return false;
}

size_t trace_wire_rd_left(const struct trace_wire_rd *r)
{
    return r->what ? 0 : r->n - r->pos;
}

const uint8_t *trace_wire_get_raw(struct trace_wire_rd *r, size_t n)
{
    if (r->what)
        return NULL;
    if (n > r->n - r->pos) {
        trace_wire_rd_fail(r, "truncated message");
        return NULL;
    }
    const uint8_t *p = r->p + r->pos;
    r->pos += n;
    return p;
}

uint8_t trace_wire_get_u8(struct trace_wire_rd *r)
{
    const uint8_t *p = trace_wire_get_raw(r, 1);
    return p ? p[0] : 0;
}

uint16_t trace_wire_get_u16(struct trace_wire_rd *r)
{
    const uint8_t *p = trace_wire_get_raw(r, 2);
    return p ? (uint16_t)(p[0] | p[1] << 8) : 0;
}

uint64_t trace_wire_get_uv(struct trace_wire_rd *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        const uint8_t *p = trace_wire_get_raw(r, 1);
        if (!p)
            return 0;
        if (shift == 63 && (p[0] & 0x7E)) {
            trace_wire_rd_fail(r, "integer out of range");
            return 0;
        }
        v |= (uint64_t)(p[0] & 0x7F) << shift;
        if (!(p[0] & 0x80))
            return v;
    }
    trace_wire_rd_fail(r, "integer out of range");
    return 0;
}

int64_t trace_wire_get_sv(struct trace_wire_rd *r)
{
    uint64_t u = trace_wire_get_uv(r);
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

double trace_wire_get_f64(struct trace_wire_rd *r)
{
    const uint8_t *p = trace_wire_get_raw(r, 8);
    if (!p)
        return 0;
    uint64_t u = 0;
    for (int i = 0; i < 8; i++)
        u |= (uint64_t)p[i] << (8 * i);
    double v;
    memcpy(&v, &u, 8);
    return v;
}

const uint8_t *trace_wire_get_bytes(struct trace_wire_rd *r, size_t max, size_t *len)
{
    uint64_t n = trace_wire_get_uv(r);
    *len = 0;
    if (r->what)
        return NULL;
    if (n > max) {
        trace_wire_rd_fail(r, "string too long");
        return NULL;
    }
    const uint8_t *p = trace_wire_get_raw(r, (size_t)n);
    if (p)
        *len = (size_t)n;
    return p;
}

char *trace_wire_get_str(struct trace_wire_rd *r, size_t max)
{
    size_t n;
    const uint8_t *p = trace_wire_get_bytes(r, max, &n);
    return p ? sim_xstrndup((const char *)p, n) : NULL;
}

/* A value (never NULL on success: null is a null value). */
static struct sim_value *get_value(struct trace_wire_rd *r, int depth)
{
    if (depth > TRACE_WIRE_VALUE_DEPTH) {
        trace_wire_rd_fail(r, "value nested too deeply");
        return NULL;
    }
    uint8_t tag = trace_wire_get_u8(r);
    if (r->what)
        return NULL;
    switch (tag) {
    case TAG_NULL: return sim_value_null();
    case TAG_FALSE: return sim_value_bool(false);
    case TAG_TRUE: return sim_value_bool(true);
    case TAG_INT: {
        int64_t i = trace_wire_get_sv(r);
        return r->what ? NULL : sim_value_int(i);
    }
    case TAG_FLOAT: {
        double f = trace_wire_get_f64(r);
        return r->what ? NULL : sim_value_float(f);
    }
    case TAG_STR: {
        size_t n;
        const uint8_t *p = trace_wire_get_bytes(r, SIZE_MAX, &n);
        return p ? sim_value_strn((const char *)p, n) : NULL;
    }
    case TAG_LIST:
    case TAG_MAP: {
        uint64_t n = trace_wire_get_uv(r);
        /* an item takes a byte at least, a map's item two (key length, value) */
        if (r->what || n > trace_wire_rd_left(r) / (tag == TAG_MAP ? 2 : 1)) {
            trace_wire_rd_fail(r, "count beyond the message");
            return NULL;
        }
        struct sim_value *v = tag == TAG_MAP ? sim_value_map() : sim_value_list();
        for (uint64_t i = 0; i < n; i++) {
            char *key = NULL;
            if (tag == TAG_MAP) {
                size_t klen;
                const uint8_t *k = trace_wire_get_bytes(r, SIZE_MAX, &klen);
                if (k && memchr(k, 0, klen))
                    trace_wire_rd_fail(r, "a map key holds a NUL byte");
                if (r->what)
                    break;
                key = sim_xstrndup((const char *)k, klen);
            }
            struct sim_value *item = get_value(r, depth + 1);
            if (!item) {
                free(key);
                break;
            }
            if (key)
                sim_value_map_set_take(v, key, item);
            else
                sim_value_list_push_take(v, item);
            free(key);
        }
        if (r->what) {
            sim_value_free(v);
            return NULL;
        }
        return v;
    }
    default: trace_wire_rd_fail(r, "unknown value tag"); return NULL;
    }
}

struct sim_value *trace_wire_get_value(struct trace_wire_rd *r)
{
    struct sim_value *v = get_value(r, 0);
    if (v && v->type == SIM_V_NULL) {
        sim_value_free(v);
        return NULL;
    }
    return v;
}

void trace_wire_skip_value(struct trace_wire_rd *r)
{
    sim_value_free(get_value(r, 0));
}

/* ---- frames from a stream ---------------------------------------------------------------- */

void trace_wire_in_init(struct trace_wire_in *in, size_t max_frame)
{
    *in = (struct trace_wire_in){.max_frame = max_frame};
}

void trace_wire_in_fini(struct trace_wire_in *in)
{
    free(in->p);
    *in = (struct trace_wire_in){0};
}

static void drop_last(struct trace_wire_in *in)
{
    if (!in->drop)
        return;
    memmove(in->p, in->p + in->drop, in->len - in->drop);
    in->len -= in->drop;
    in->drop = 0;
}

uint8_t *trace_wire_in_room(struct trace_wire_in *in, size_t *n)
{
    drop_last(in);
    enum { READ = 64 * 1024 };
    /* what a frame can still need, and a read's worth beyond it */
    size_t want = in->len + READ;
    if (want > in->cap) {
        size_t cap = in->cap ? in->cap : 4096;
        while (cap < want)
            cap *= 2;
        in->p = sim_xrealloc(in->p, cap);
        in->cap = cap;
    }
    *n = READ;
    return in->p + in->len;
}

void trace_wire_in_added(struct trace_wire_in *in, size_t n)
{
    assert(in->len + n <= in->cap);
    in->len += n;
}

bool trace_wire_in_ready(const struct trace_wire_in *in)
{
    size_t len = in->len - in->drop;
    if (len < 4)
        return false;
    const uint8_t *p = in->p + in->drop;
    uint32_t n = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return n == 0 || (uint64_t)n + 4 > in->max_frame || len >= (size_t)n + 4;
}

int trace_wire_in_next(struct trace_wire_in *in, struct trace_wire_frame *f, const char **why)
{
    drop_last(in);
    if (in->len < 4)
        return 0;
    const uint8_t *p = in->p;
    uint32_t len =
        (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    if (len == 0) {
        *why = "a frame of length 0";
        return -1;
    }
    if ((uint64_t)len + 4 > in->max_frame) {
        *why = "a frame longer than the limit";
        return -1;
    }
    if (in->len < (size_t)len + 4)
        return 0;
    f->type = p[4];
    f->body = p + TRACE_WIRE_HEADER;
    f->len = len - 1;
    in->drop = (size_t)len + 4;
    return 1;
}
