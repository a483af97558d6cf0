/*
 * The direct reader of an ENGINE_EVENT as npuscope writes it (see evread.h). Hand-rolled
 * because building a cJSON node for each of an event's fixed fields, then finding them by
 * name, was a third of a trace's load (perf, 10 M events); here each member is matched
 * against the one name the writer puts there, and anything else gives up.
 */
#include "trace/file/evread.h"

#include "trace/file/fastjson.h"
#include "trace/model/format.h"
#include "trace/model/json.h"
#include "trace/model/model.h"

#include <limits.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

/* The first byte of p[0, e - p) that ends a plain string: '"', '\\' or a control byte (e
 * when none); sixteen bytes at a time with SSE2, else eight (the strings were a quarter of
 * the thread reading them). */
static inline const char *plain_end(const char *p, const char *e)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                  ctl = _mm_set1_epi8(0x1f);
    for (; e - p >= 16; p += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        /* a byte is a control byte when the larger of it and 0x1f (unsigned) is 0x1f */
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)),
                                 _mm_cmpeq_epi8(_mm_max_epu8(x, ctl), ctl));
        unsigned bits = (unsigned)_mm_movemask_epi8(m);
        if (bits)
            return p + __builtin_ctz(bits);
    }
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    for (; e - p >= 8; p += 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        uint64_t q = x ^ (ones * '"'), b = x ^ (ones * '\\');
        /* the bytes that are zero in q or b, or below 0x20 in x: exact up to the first */
        uint64_t t = ((q - ones) & ~q) | ((b - ones) & ~b) | ((x - ones * 0x20) & ~x);
        if ((t &= high))
            return p + __builtin_ctzll(t) / 8;
    }
#endif
    while (p < e && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
        p++;
    return p;
}

/* A string as cJSON reads it without a change: no escape, no control byte; *k its first
 * byte and *kn its length when asked. */
static bool text_string(struct rd *r, const char **k, size_t *kn)
{
    if (r->p >= r->e || *r->p != '"')
        return false;
    const char *s = ++r->p;
    r->p = plain_end(r->p, r->e);
    if (r->p >= r->e || *r->p != '"')
        return false;
    if (k)
        *k = s, *kn = (size_t)(r->p - s);
    r->p++;
    return true;
}

/* A plain string ("..." without escapes or control bytes) copied into the text, or NULL. */
static const char *str(struct rd *r)
{
    const char *s;
    size_t n;
    if (!text_string(r, &s, &n) || (size_t)(r->te - r->t) <= n)
        return NULL;
    char *c = r->t;
    memcpy(c, s, n);
    c[n] = '\0';
    r->t += n + 1;
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
static bool read_uint(struct rd *r, uint64_t *out)
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
    if (!read_uint(r, &v))
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
    ev->hashed = true;
    const char *s[4] = {ev->layer, ev->tile, ev->op, ev->component};
    for (int k = 0; k < 4; k++)
        ev->hash[k] = s[k] ? trace_evread_hash(s[k], ev->len[k], TRACE_EVREAD_SEED) : 0;
    const cJSON *src = ev->found[TRACE_EVK_SRC], *fn = ev->found[TRACE_EVK_SRC_FUNC];
    ev->site_ok = trace_json_is(src, cJSON_String);
    if (!ev->site_ok)
        return;
    const char *f = trace_json_is(fn, cJSON_String) && fn->valuestring[0] ? fn->valuestring : "";
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

/* ---- details as text ---------------------------------------------------------------- */

enum {
    TEXT_DEPTH = 32,  /* most nesting read as text (cJSON allows more: the tree reads it) */
    TEXT_NUMBER = 40, /* most bytes of a number not read (cJSON copies 63 to strtod) */
    /* the keys read beside trace_opinfo_keys, by their ids after its positions */
    TK_SRC = TRACE_OPINFO_NKEYS,
    TK_SRC_FUNC,
    TK_ROLE,
    TK_REPLAY,
    TK_COUNT,
};

/* A number of JSON's grammar; with strict, an integer of at most DIGITS_MAX digits. */
static bool text_number(struct rd *r, bool strict)
{
    const char *s = r->p;
    r->p += r->p < r->e && *r->p == '-';
    const char *d = r->p;
    while (r->p < r->e && *r->p >= '0' && *r->p <= '9')
        r->p++;
    size_t nd = (size_t)(r->p - d);
    if (!nd || (nd > 1 && *d == '0') || r->p >= r->e)
        return false;
    if (strict)
        return nd <= DIGITS_MAX && (*r->p == ',' || *r->p == '}' || *r->p == ']');
    if (*r->p == '.') {
        const char *f = ++r->p;
        while (r->p < r->e && *r->p >= '0' && *r->p <= '9')
            r->p++;
        if (r->p == f)
            return false;
    }
    if (r->p < r->e && (*r->p == 'e' || *r->p == 'E')) {
        r->p++;
        r->p += r->p < r->e && (*r->p == '+' || *r->p == '-');
        const char *x = r->p;
        while (r->p < r->e && *r->p >= '0' && *r->p <= '9')
            r->p++;
        if (r->p == x)
            return false;
    }
    return r->p - s <= TEXT_NUMBER;
}

/* The value at r->p skipped, when it is JSON cJSON reads as it stands (strict: its numbers
 * integers; struct trace_opinfo_text). */
static bool text_value(struct rd *r, bool strict, int depth)
{
    if (r->p >= r->e)
        return false;
    switch (*r->p) {
    case '"': return text_string(r, NULL, NULL);
    case '{':
    case '[': {
        char close = *r->p == '{' ? '}' : ']';
        if (depth == TEXT_DEPTH)
            return false;
        r->p++;
        if (r->p < r->e && *r->p == close) {
            r->p++;
            return true;
        }
        for (;;) {
            if (close == '}' && (!text_string(r, NULL, NULL) || !LIT(r, ":")))
                return false;
            if (!text_value(r, strict, depth + 1) || r->p >= r->e)
                return false;
            char c = *r->p++;
            if (c == close)
                return true;
            if (c != ',')
                return false;
        }
    }
    case 't': return LIT(r, "true");
    case 'f': return LIT(r, "false");
    case 'n': return LIT(r, "null");
    default: return text_number(r, strict);
    }
}

/* The id of key k[0, n) (trace_opinfo_keys' position, or TK_*), or -1; the bytes readable
 * from k end at e. */
static int text_key(const char *k, size_t n, const char *e)
{
    switch (n) {
    case 3: return same_n(k, "src", 3) ? TK_SRC : -1;
    case 6:
        if (same_n(k, "replay", 6))
            return TK_REPLAY;
        break;
    case 8:
        if (same_n(k, "src_func", 8))
            return TK_SRC_FUNC;
        break;
    case 11:
        if (same_n(k, "tensor_role", 11))
            return TK_ROLE;
        break;
    }
    return trace_opinfo_key_in(k, n, e);
}

/* Where the first value of each key of interest is in details: offsets from its first
 * byte by id, there where bit id of set is (op: the op columns' keys; x: TK_*'s). */
struct slots {
    uint64_t set;
    uint32_t *op;
    uint32_t x[TK_COUNT - TRACE_OPINFO_NKEYS];
};

static uint32_t slot_at(const struct slots *s, int id)
{
    return !(s->set >> id & 1)       ? 0
           : id < TRACE_OPINFO_NKEYS ? s->op[id]
                                     : s->x[id - TRACE_OPINFO_NKEYS];
}

/*
 * The members of the object at r->p (base: details' first byte) into at (the first value
 * of each key of interest; with rep, the top of details: "replay"'s members into rep), the
 * values of interest read strictly.
 */
static bool text_members(struct rd *r, const char *base, struct slots *at, struct slots *rep)
{
    r->p++;
    if (r->p < r->e && *r->p == '}') {
        r->p++;
        return true;
    }
    for (;;) {
        const char *k;
        size_t kn;
        if (!text_string(r, &k, &kn) || !LIT(r, ":") || r->p >= r->e)
            return false;
        int id = text_key(k, kn, r->e);
        if (!rep && (id == TK_SRC || id == TK_SRC_FUNC || id == TK_REPLAY))
            id = -1; /* read from the top alone */
        bool first = id >= 0 && !(at->set >> id & 1);
        if (first) {
            uint32_t off = (uint32_t)(r->p - base);
            at->set |= (uint64_t)1 << id;
            if (id < TRACE_OPINFO_NKEYS)
                at->op[id] = off;
            else
                at->x[id - TRACE_OPINFO_NKEYS] = off;
        }
        if (first && id == TK_REPLAY && *r->p == '{') {
            if (!text_members(r, base, rep, NULL))
                return false;
        } else if (!text_value(r, first, 1)) {
            return false;
        }
        if (r->p >= r->e || (r->p - base) >= TRACE_EVREAD_DETAILS)
            return false;
        char c = *r->p++;
        if (c == '}')
            return true;
        if (c != ',')
            return false;
    }
}

/* The value at offset off of details (0: none) as a node of ev's own, into *out; false when
 * it is an array or an object. */
static bool text_node(struct rd *r, const char *base, uint32_t off, cJSON *node, const cJSON **out)
{
    *out = NULL;
    if (!off)
        return true;
    struct rd v = {base + off, r->e, r->t, r->te, 0};
    memset(node, 0, sizeof(*node));
    uint64_t u;
    switch (*v.p) {
    case '"':
        node->type = cJSON_String;
        if (!(node->valuestring = (char *)str(&v)))
            return false;
        r->t = v.t;
        break;
    case 'n': node->type = cJSON_NULL; break;
    case 't': node->type = cJSON_True; break;
    case 'f': node->type = cJSON_False; break;
    case '[':
    case '{': return false;
    default: /* an integer (read strictly): cJSON's number of it */
        v.p += *v.p == '-';
        if (!read_uint(&v, &u))
            return false;
        node->type = cJSON_Number;
        node->valuedouble = base[off] == '-' ? -(double)u : (double)u;
        node->valueint = node->valuedouble >= INT_MAX   ? INT_MAX
                         : node->valuedouble <= INT_MIN ? INT_MIN
                                                        : (int)node->valuedouble;
    }
    *out = node;
    return true;
}

/*
 * details at r->p (an object's '{') read as text into ev (dtext, node, found), r->p past
 * it; false when it is not of the shape struct trace_evread says (r is then of no use).
 * found as trace_evread_find gives it, but for the replay.
 */
static bool text_details(struct rd *r, bool dram, struct trace_evread *ev)
{
    const char *base = r->p;
    struct slots at = {.op = ev->dtext.top}, rep = {.op = ev->dtext.rep};
    if (!text_members(r, base, &at, &rep))
        return false;
    const uint64_t op_keys = ((uint64_t)1 << TRACE_OPINFO_NKEYS) - 1;
    ev->dtext.base = base;
    ev->dtext.top_set = at.set & op_keys, ev->dtext.rep_set = rep.set & op_keys;
    /* found's members by their ids, at the top then under replay (trace_evread_find) */
    static const int ids[TRACE_EVK_REP_END] = {
        [TRACE_EVK_SRC] = TK_SRC,
        [TRACE_EVK_SRC_FUNC] = TK_SRC_FUNC,
        [TRACE_EVK_DIRECTION] = TRACE_OPINFO_K_DIRECTION,
        [TRACE_EVK_ROLE] = TK_ROLE,
        [TRACE_EVK_SRC_SPACE] = TRACE_OPINFO_K_SRC_SPACE,
        [TRACE_EVK_DST_SPACE] = TRACE_OPINFO_K_DST_SPACE,
        [TRACE_EVK_BYTES] = TRACE_OPINFO_K_BYTES,
        [TRACE_EVK_NBYTES] = TRACE_OPINFO_K_NBYTES,
        [TRACE_EVK_REPLAY] = -1,
    };
    for (int k = 0; k < TRACE_EVK_REP_END; k++)
        ev->found[k] = NULL;
    int n = dram ? TRACE_EVK_TOP : TRACE_EVK_DIRECTION;
    for (int k = 0; k < n; k++)
        if (ids[k] >= 0 && !text_node(r, base, slot_at(&at, ids[k]), &ev->node[k], &ev->found[k]))
            return false;
    if (dram &&
        (!slot_at(&at, ids[TRACE_EVK_DIRECTION]) || !slot_at(&at, TK_ROLE) ||
         !slot_at(&at, ids[TRACE_EVK_SRC_SPACE]) || !slot_at(&at, ids[TRACE_EVK_DST_SPACE])))
        for (int k = TRACE_EVK_DIRECTION; k < TRACE_EVK_BYTES; k++) {
            int q = TRACE_EVK_REP_DIRECTION + k - TRACE_EVK_DIRECTION;
            if (!text_node(r, base, slot_at(&rep, ids[k]), &ev->node[q], &ev->found[q]))
                return false;
        }
    return true;
}

bool trace_evread_engine(const char *p, size_t n, bool ahead, size_t *len, struct trace_evread *ev)
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
    if (!LIT(&r, ",\"start_cycle\":") || !read_uint(&r, &ev->start) ||
        !LIT(&r, ",\"end_cycle\":") || !read_uint(&r, &ev->end))
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
                if (ev->ndeps == TRACE_EVREAD_DEPS || !read_uint(&r, &v))
                    return false;
                ev->deps[ev->ndeps++] = v;
            } while (LIT(&r, ","));
            if (!LIT(&r, "]"))
                return false;
        }
    }
    bool dram = ev->engine[0] == 'D' && strcmp(ev->engine, "DMA") == 0;
    ev->dtext_ok = false;
    if (LIT(&r, ",\"details\":") && !LIT(&r, "null")) {
        if (r.p >= r.e || *r.p != '{')
            return false;
        const char *at = r.p;
        char *t = r.t;
        ev->dtext_ok = text_details(&r, dram, ev);
        if (!ev->dtext_ok) { /* another shape: its tree */
            r.p = at, r.t = t;
            const char *end = NULL;
            ev->details = trace_fastjson_parse(r.p, (size_t)(r.e - r.p), &end);
            if (!ev->details)
                return false;
            r.p = end;
        }
    }
    if (!LIT(&r, "}"))
        return false;
    if (!ev->dtext_ok)
        trace_evread_find(ev->details, dram, ev->found);
    ev->hashed = ev->site_ok = false;
    if (ahead)
        hash_strings(ev);
    enum trace_engine eng;
    ev->kind_ok = ahead && trace_engine_parse(ev->engine, &eng) == 0;
    if (ev->kind_ok)
        ev->kind = trace_kind_for_engine(eng);
    if (ev->kind_ok && ev->op_kind)
        ev->kind_ok = trace_op_kind_parse(ev->op_kind, &ev->kind) == 0;
    if (ev->kind_ok && ev->dtext_ok)
        trace_opinfo_decode_text_pre(ev->op, ev->kind, &ev->dtext, &ev->opinfo);
    else if (ev->kind_ok)
        trace_opinfo_decode_pre(ev->op, ev->kind, ev->details, &ev->opinfo);
    *len = (size_t)(r.p - p);
    return true;
}
