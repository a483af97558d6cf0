/*
 * The direct reader of an ENGINE_EVENT as npuscope writes it (see evread.h). Hand-rolled
 * because building a cJSON node for each of an event's fixed fields, then finding them by
 * name, was a third of a trace's load (perf, 10 M events); here each member is matched
 * against the one name the writer puts there, and anything else gives up.
 */
#include "trace/file/evread.h"

#include "trace/file/fastjson.h"
#include "trace/model/format.h"
#include "trace/model/model.h"

#include <string.h>

enum { DIGITS_MAX = 15 };

struct rd {
    const char *p, *e;
    char *t, *te; /* the next free byte of the copies; their end */
    size_t last;  /* the length of the last string copied */
};

/* p[0, n) == s[0, n), for a literal s: compared eight bytes at a time, inline (n is known
 * where it is called; memcmp's calls were a twentieth of the thread that parses ahead). */
static inline __attribute__((always_inline)) bool same_n(const char *p, const char *s, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t a, b;
        memcpy(&a, p + i, 8), memcpy(&b, s + i, 8);
        if (a != b)
            return false;
    }
    if (n - i >= 4) {
        uint32_t a, b;
        memcpy(&a, p + i, 4), memcpy(&b, s + i, 4);
        if (a != b)
            return false;
        i += 4;
    }
    for (; i < n; i++)
        if (p[i] != s[i])
            return false;
    return true;
}

/* The literal s next (skipped when it is). */
#define LIT(r, s)                                                                                  \
    ((size_t)((r)->e - (r)->p) >= sizeof(s) - 1 && same_n((r)->p, s, sizeof(s) - 1)                \
         ? ((r)->p += sizeof(s) - 1, true)                                                         \
         : false)

/* A plain string ("..." without escapes or control bytes) copied into the text, or NULL. */
static const char *str(struct rd *r)
{
    if (r->p >= r->e || *r->p != '"')
        return NULL;
    const char *s = ++r->p;
    while (r->p < r->e && *r->p != '"' && *r->p != '\\' && (unsigned char)*r->p >= 0x20)
        r->p++;
    if (r->p >= r->e || *r->p != '"')
        return NULL;
    size_t n = (size_t)(r->p - s);
    if ((size_t)(r->te - r->t) <= n)
        return NULL;
    char *c = r->t;
    memcpy(c, s, n);
    c[n] = '\0';
    r->t += n + 1;
    r->p++;
    r->last = n;
    return c;
}

/* A string or null: *out the copy or NULL; false when neither. */
static bool str_or_null(struct rd *r, const char **out)
{
    if (LIT(r, "null")) {
        *out = NULL;
        r->last = 0;
        return true;
    }
    return (*out = str(r)) != NULL;
}

/* A non-negative integer without a sign, a leading zero (but 0), a fraction or an
 * exponent, of at most DIGITS_MAX digits, ended by ',', '}' or ']'. */
static bool uint(struct rd *r, uint64_t *out)
{
    const char *s = r->p;
    uint64_t v = 0;
    while (r->p < r->e && *r->p >= '0' && *r->p <= '9' && r->p - s <= DIGITS_MAX)
        v = v * 10 + (uint64_t)(*r->p++ - '0');
    size_t n = (size_t)(r->p - s);
    if (!n || n > DIGITS_MAX || (n > 1 && *s == '0') || r->p >= r->e ||
        (*r->p != ',' && *r->p != '}' && *r->p != ']'))
        return false;
    *out = v;
    return true;
}

static bool int64(struct rd *r, int64_t *out)
{
    uint64_t v;
    if (!uint(r, &v))
        return false;
    *out = (int64_t)v;
    return true;
}

/* A number cJSON reads as one: -?digits(.digits)?, ended by ',' or '}'. */
static bool number(struct rd *r)
{
    r->p += r->p < r->e && *r->p == '-';
    const char *s = r->p;
    while (r->p < r->e && *r->p >= '0' && *r->p <= '9')
        r->p++;
    if (r->p == s)
        return false;
    if (r->p < r->e && *r->p == '.') {
        const char *f = ++r->p;
        while (r->p < r->e && *r->p >= '0' && *r->p <= '9')
            r->p++;
        if (r->p == f)
            return false;
    }
    return r->p < r->e && (*r->p == ',' || *r->p == '}');
}

uint32_t trace_evread_hash(const char *s, size_t n, uint32_t h)
{
    uint64_t a = 0, b = 0, c = 0;
    if (n >= 8) {
        memcpy(&a, s, 8);
        memcpy(&b, s + (n - 8) / 2, 8);
        memcpy(&c, s + n - 8, 8);
    } else {
        memcpy(&a, s, n);
    }
    uint64_t x = (h ^ ((uint64_t)n << 32) ^ a) * 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 29) ^ b) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 29) ^ c) * 0x94D049BB133111EBull;
    return (uint32_t)(x >> 32) ^ (uint32_t)x;
}

/* The hashes of the strings the loader interns (struct trace_evread; their lengths are
 * set as they are read). */
static void hash_strings(struct trace_evread *ev)
{
    const char *s[4] = {ev->layer, ev->tile, ev->op, ev->component};
    for (int k = 0; k < 4; k++)
        ev->hash[k] = s[k] ? trace_evread_hash(s[k], ev->len[k], TRACE_EVREAD_SEED) : 0;
    const cJSON *src = ev->found[TRACE_EVK_SRC], *fn = ev->found[TRACE_EVK_SRC_FUNC];
    ev->site_ok = cJSON_IsString(src);
    if (!ev->site_ok)
        return;
    const char *f = cJSON_IsString(fn) && fn->valuestring[0] ? fn->valuestring : "";
    ev->site_len[0] = (uint32_t)strlen(src->valuestring), ev->site_len[1] = (uint32_t)strlen(f);
    ev->site_hash =
        trace_evread_hash(f, ev->site_len[1],
                          trace_evread_hash(src->valuestring, ev->site_len[0], TRACE_EVREAD_SEED));
}

void trace_evread_find(const cJSON *details, bool dram, const cJSON **found)
{
    static const char *const keys[TRACE_EVK_TOP] = {TRACE_DETAILS_SRC,
                                                    TRACE_DETAILS_SRC_FUNC,
                                                    "direction",
                                                    TRACE_DETAILS_ROLE,
                                                    "src_space",
                                                    "dst_space",
                                                    "bytes",
                                                    "nbytes",
                                                    TRACE_DETAILS_REPLAY};
    for (int k = 0; k < TRACE_EVK_REP_END; k++)
        found[k] = NULL;
    /* one pass over details */
    trace_fastjson_members(details, keys, dram ? TRACE_EVK_TOP : TRACE_EVK_DIRECTION, found);
    if (dram && (!found[TRACE_EVK_DIRECTION] || !found[TRACE_EVK_ROLE] ||
                 !found[TRACE_EVK_SRC_SPACE] || !found[TRACE_EVK_DST_SPACE]))
        trace_fastjson_members(found[TRACE_EVK_REPLAY], keys + TRACE_EVK_DIRECTION,
                               TRACE_EVK_BYTES - TRACE_EVK_DIRECTION,
                               found + TRACE_EVK_REP_DIRECTION);
}

bool trace_evread_engine(const char *p, size_t n, bool opinfo, size_t *len, struct trace_evread *ev)
{
    struct rd r = {p, p + n, ev->text, ev->text + sizeof(ev->text), 0};
    uint64_t v;
    if (!LIT(&r, "{\"type\":\"ENGINE_EVENT\",\"engine\":") || !(ev->engine = str(&r)) ||
        !LIT(&r, ",\"engine_id\":") || !int64(&r, &ev->engine_id) || !LIT(&r, ",\"cmdq_id\":"))
        return false;
    ev->has_cmdq = !LIT(&r, "null");
    if ((ev->has_cmdq && !int64(&r, &ev->cmdq_id)) || !LIT(&r, ",\"layer_id\":") ||
        !str_or_null(&r, &ev->layer))
        return false;
    ev->len[0] = (uint32_t)r.last;
    if (!LIT(&r, ",\"tile_id\":") || !str_or_null(&r, &ev->tile))
        return false;
    ev->len[1] = (uint32_t)r.last;
    if (!LIT(&r, ",\"op\":") || !(ev->op = str(&r)))
        return false;
    ev->len[2] = (uint32_t)r.last, ev->len[3] = 0;
    if (!LIT(&r, ",\"start_cycle\":") || !uint(&r, &ev->start) || !LIT(&r, ",\"end_cycle\":") ||
        !uint(&r, &ev->end))
        return false;
    ev->component = ev->op_kind = NULL;
    ev->details = NULL;
    ev->ndeps = 0;
    if (LIT(&r, ",\"component_id\":")) {
        if (!(ev->component = str(&r)))
            return false;
        ev->len[3] = (uint32_t)r.last;
    }
    if (LIT(&r, ",\"op_kind\":") && !(ev->op_kind = str(&r)))
        return false;
    if (LIT(&r, ",\"t_start_ns\":") && !number(&r))
        return false;
    if (LIT(&r, ",\"t_end_ns\":") && !number(&r))
        return false;
    if (LIT(&r, ",\"dependency_ids\":[")) {
        if (!LIT(&r, "]")) {
            do {
                if (ev->ndeps == TRACE_EVREAD_DEPS || !uint(&r, &v))
                    return false;
                ev->deps[ev->ndeps++] = v;
            } while (LIT(&r, ","));
            if (!LIT(&r, "]"))
                return false;
        }
    }
    if (LIT(&r, ",\"details\":") && !LIT(&r, "null")) {
        if (r.p >= r.e || *r.p != '{')
            return false;
        const char *end = NULL;
        ev->details = trace_fastjson_parse(r.p, (size_t)(r.e - r.p), &end);
        if (!ev->details)
            return false;
        r.p = end;
    }
    if (!LIT(&r, "}"))
        return false;
    trace_evread_find(ev->details, ev->engine[0] == 'D' && strcmp(ev->engine, "DMA") == 0,
                      ev->found);
    hash_strings(ev);
    enum trace_engine eng;
    ev->kind_ok = opinfo && trace_engine_parse(ev->engine, &eng) == 0;
    if (ev->kind_ok)
        ev->kind = trace_kind_for_engine(eng);
    if (ev->kind_ok && ev->op_kind)
        ev->kind_ok = trace_op_kind_parse(ev->op_kind, &ev->kind) == 0;
    if (ev->kind_ok)
        trace_opinfo_decode_pre(ev->op, ev->kind, ev->details, &ev->opinfo);
    *len = (size_t)(r.p - p);
    return true;
}
