/*
 * The fast parser in front of cJSON (see fastjson.h). Hand-rolled because cJSON spends
 * most of a trace's load on what this shape does not need: three strncmp calls (null,
 * false, true) before every value, and for every number a copy, localeconv() and strtod().
 * Every tree it returns is the one cJSON 1.7 builds: nodes linked with next and prev and
 * the first child's prev the last, a key moved into string, true with valueint 1, numbers
 * with cJSON's valueint clamp. Numbers: an integer of at most 15 digits is exact in a
 * double, and so is a decimal of at most 15 digits (no exponent) divided by a power of ten
 * up to 10^15 (both exact, one correctly rounded division: the value strtod gives).
 * Beside it: cJSON as the fallback, and a one-pass lookup of several members of an object.
 */
#include "trace/file/fastjson.h"

#include "trace/file/arena.h"

#include <limits.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

enum { DEPTH_MAX = 64, DIGITS_MAX = 15 };

struct fj {
    const unsigned char *p, *e; /* the bytes; e: their end */
};

static const double pow10[DIGITS_MAX + 1] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                             1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

/* cJSON skips every byte up to the space as whitespace. */
static void skip_ws(struct fj *f)
{
    while (f->p < f->e && *f->p <= 32)
        f->p++;
}

static cJSON *node(int type)
{
    cJSON *c = trace_arena_malloc(sizeof(*c));
    if (c) {
        memset(c, 0, sizeof(*c));
        c->type = type;
    }
    return c;
}

/* The string whose '"' is at f->p (a new copy), or NULL: an escape or a control byte
 * (cJSON's to read), an unterminated string, memory refused. */
static char *string(struct fj *f)
{
    const unsigned char *s = f->p + 1, *q = s;
#ifdef __SSE2__
    /* sixteen bytes at a time while none of them ends the string or needs cJSON */
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'),
                  space = _mm_set1_epi8(0x20), sign = _mm_set1_epi8((char)0x80);
    while (f->e - q >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)q);
        __m128i ctl = _mm_cmplt_epi8(_mm_xor_si128(x, sign), _mm_xor_si128(space, sign));
        __m128i hit =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)), ctl);
        int mask = _mm_movemask_epi8(hit);
        if (mask) {
            q += __builtin_ctz((unsigned)mask);
            break;
        }
        q += 16;
    }
#endif
    while (q < f->e && *q != '"' && *q != '\\' && *q >= 0x20)
        q++;
    if (q >= f->e || *q != '"')
        return NULL;
    size_t n = (size_t)(q - s);
    char *c = trace_arena_malloc(n + 2); /* what cJSON asks for (the arena's limit counts it) */
    if (!c)
        return NULL;
    memcpy(c, s, n);
    c[n] = '\0';
    f->p = q + 1;
    return c;
}

static bool number_char(unsigned char c)
{
    return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == 'e' || c == 'E' || c == '.';
}

/* -?digits(.digits)? of at most DIGITS_MAX digits in all, not followed by anything cJSON
 * would take as part of the number; else false (cJSON reads it). */
static bool number(struct fj *f, cJSON *c)
{
    const unsigned char *q = f->p;
    bool neg = q < f->e && *q == '-';
    q += neg;
    uint64_t v = 0;
    int digits = 0, frac = 0;
    while (q < f->e && *q >= '0' && *q <= '9' && digits <= DIGITS_MAX)
        v = v * 10 + (uint64_t)(*q++ - '0'), digits++;
    if (!digits)
        return false;
    if (q < f->e && *q == '.') {
        q++;
        while (q < f->e && *q >= '0' && *q <= '9' && digits <= DIGITS_MAX)
            v = v * 10 + (uint64_t)(*q++ - '0'), digits++, frac++;
        if (!frac)
            return false;
    }
    if (digits > DIGITS_MAX || (q < f->e && number_char(*q)))
        return false;
    double d = (double)v;
    if (frac)
        d /= pow10[frac];
    if (neg)
        d = -d;
    c->type = cJSON_Number;
    c->valuedouble = d;
    c->valueint = d >= INT_MAX ? INT_MAX : d <= (double)INT_MIN ? INT_MIN : (int)d;
    f->p = q;
    return true;
}

static bool value(struct fj *f, cJSON *c, int depth);

/* The members (object) or elements (array) of the container c whose bracket is at f->p. */
static bool members(struct fj *f, cJSON *c, bool object, int depth)
{
    unsigned char close = object ? '}' : ']';
    f->p++;
    skip_ws(f);
    if (f->p < f->e && *f->p == close) {
        f->p++;
        return true;
    }
    cJSON *head = NULL, *tail = NULL;
    for (;;) {
        cJSON *item = node(0);
        if (!item)
            return false;
        if (!head) {
            head = tail = item;
            c->child = head;
        } else {
            tail->next = item;
            item->prev = tail;
            tail = item;
        }
        head->prev = tail;
        skip_ws(f);
        if (object) {
            if (f->p >= f->e || *f->p != '"' || !(item->string = string(f)))
                return false;
            skip_ws(f);
            if (f->p >= f->e || *f->p != ':')
                return false;
            f->p++;
            skip_ws(f);
        }
        if (!value(f, item, depth))
            return false;
        skip_ws(f);
        if (f->p < f->e && *f->p == ',') {
            f->p++;
            continue;
        }
        if (f->p < f->e && *f->p == close) {
            f->p++;
            return true;
        }
        return false;
    }
}

static bool word(struct fj *f, const char *w, size_t n)
{
    if ((size_t)(f->e - f->p) < n || memcmp(f->p, w, n) != 0)
        return false;
    f->p += n;
    return true;
}

/* The value at f->p (whitespace skipped) into c. */
static bool value(struct fj *f, cJSON *c, int depth)
{
    if (f->p >= f->e)
        return false;
    switch (*f->p) {
    case '"': c->type = cJSON_String; return (c->valuestring = string(f)) != NULL;
    case '{':
    case '[':
        if (depth >= DEPTH_MAX)
            return false;
        c->type = *f->p == '{' ? cJSON_Object : cJSON_Array;
        return members(f, c, *f->p == '{', depth + 1);
    case 'n': c->type = cJSON_NULL; return word(f, "null", 4);
    case 't':
        c->type = cJSON_True;
        c->valueint = 1;
        return word(f, "true", 4);
    case 'f': c->type = cJSON_False; return word(f, "false", 5);
    default: return number(f, c);
    }
}

cJSON *trace_fastjson_parse(const char *p, size_t n, const char **end)
{
    struct fj f = {(const unsigned char *)p, (const unsigned char *)p + n};
    if (n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        return NULL; /* a byte order mark: cJSON's */
    skip_ws(&f);
    cJSON *c = node(0);
    if (c && !value(&f, c, 0)) {
        if (!trace_arena_active())
            cJSON_Delete(c); /* with malloc, what it built (an arena's reset frees the rest) */
        c = NULL;
    }
    if (!c)
        return NULL;
    *end = (const char *)f.p;
    return c;
}

cJSON *trace_fastjson_parse_any(const char *p, size_t n, const char **end, struct trace_arena *a)
{
    cJSON *j = trace_fastjson_parse(p, n, end);
    if (j)
        return j;
    if (a)
        trace_arena_mark(a);
    return cJSON_ParseWithLengthOpts(p, n, end, 0);
}

/* strcmp(a, b) == 0 inline: the names are short, and the calls were a tenth of the time
 * of the thread that parses ahead (perf) */
static inline bool same(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

void trace_fastjson_members(const cJSON *o, const char *const *keys, int n, const cJSON **out)
{
    for (const cJSON *c = o ? o->child : NULL; c && c->string; c = c->next)
        for (int k = 0; k < n; k++)
            if (!out[k] && c->string[0] == keys[k][0] && same(c->string, keys[k])) {
                out[k] = c;
                break;
            }
}
