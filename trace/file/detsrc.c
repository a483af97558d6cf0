/* The details of a loaded trace's events, read again from its file (see detsrc.h). */
#include "trace/file/detsrc.h"

#include "sim/util/mapguard.h"
#include "sim/util/xalloc.h"
#include "trace/file/compress.h"
#include "trace/model/json.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    RELEASE_STEP = 32 << 20, /* give back the pages read every 32 MiB */
    COPY_DEPTH = 32,         /* deeper details are parsed, not copied */
    COPY_KEYS = 64,          /* objects with more members are parsed, not copied */
    INT_DIGITS = 15,         /* longer integers are parsed (a double holds them exactly) */
};

struct trace_detsrc {
    const char *p; /* the mapped file */
    size_t n;
    size_t released; /* pages before it were given back */
    long page;
};

struct trace_detsrc *trace_detsrc_open(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    char head[8];
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        pread(fd, head, sizeof(head), 0) != (ssize_t)sizeof(head) ||
        trace_z_kind_of_bytes(head, sizeof(head)) != TRACE_Z_NONE) {
        close(fd);
        return NULL;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return NULL;
    madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
    sim_mapguard_add(p, (size_t)st.st_size); /* the file may be cut short while it is read */
    struct trace_detsrc *s = sim_xcalloc(1, sizeof(*s));
    s->p = p, s->n = (size_t)st.st_size, s->page = sysconf(_SC_PAGESIZE);
    return s;
}

void trace_detsrc_close(struct trace_detsrc *s)
{
    if (!s)
        return;
    sim_mapguard_remove(s->p);
    munmap((void *)s->p, s->n);
    free(s);
}

/* ---- copying a value as it stands ------------------------------------------------------- */

static const char *skip_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

/*
 * A string at p ('"') of plain printable ASCII without escapes, which cJSON reads as the
 * bytes between the quotes and trace_out_str prints as they are. Returns the end (past
 * the closing quote), or NULL for any other string.
 */
static const char *plain_string(const char *p, const char *e)
{
    for (p++; p < e; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            return p + 1;
        if (c < 0x20 || c >= 0x80 || c == '\\')
            return NULL;
    }
    return NULL;
}

/* An integer of at most INT_DIGITS digits without leading zeros, not "-0": cJSON reads it
 * exactly and trace_out_value prints it with the same digits. Returns its end or NULL. */
static const char *plain_int(const char *p, const char *e)
{
    const char *q = p;
    if (q < e && *q == '-')
        q++;
    const char *d = q;
    while (q < e && *q >= '0' && *q <= '9')
        q++;
    size_t nd = (size_t)(q - d);
    if (nd == 0 || nd > INT_DIGITS || (*d == '0' && (nd > 1 || d > p)))
        return NULL;
    if (q < e && (*q == '.' || *q == 'e' || *q == 'E' || *q == '+' || *q == '-'))
        return NULL;
    return q;
}

static bool lit(const char *p, const char *e, const char *w, size_t n)
{
    return (size_t)(e - p) >= n && memcmp(p, w, n) == 0;
}

/*
 * Check that the value at p can be copied: objects without repeated keys, arrays, plain
 * strings, plain integers, true, false, null. Returns its end or NULL; *ws is set when
 * whitespace lies between its tokens (then it is copied without it).
 */
static const char *check_value(const char *p, const char *e, int depth, bool *ws)
{
    if (p >= e)
        return NULL;
    switch (*p) {
    case '"': return plain_string(p, e);
    case 't': return lit(p, e, "true", 4) ? p + 4 : NULL;
    case 'f': return lit(p, e, "false", 5) ? p + 5 : NULL;
    case 'n': return lit(p, e, "null", 4) ? p + 4 : NULL;
    case '[':
    case '{': break;
    default: return plain_int(p, e);
    }
    if (depth >= COPY_DEPTH)
        return NULL;
    bool obj = *p == '{';
    char close = obj ? '}' : ']';
    const char *keys[COPY_KEYS];
    size_t klen[COPY_KEYS], nk = 0;
    const char *q = skip_ws(p + 1, e);
    *ws |= q != p + 1;
    if (q < e && *q == close)
        return q + 1;
    for (;;) {
        if (obj) {
            const char *k = q, *ke = q < e && *q == '"' ? plain_string(q, e) : NULL;
            if (!ke || nk == COPY_KEYS)
                return NULL;
            size_t kl = (size_t)(ke - k);
            for (size_t i = 0; i < nk; i++) /* a repeated key: its first value is kept */
                if (klen[i] == kl && memcmp(keys[i], k, kl) == 0)
                    return NULL;
            keys[nk] = k, klen[nk++] = kl;
            q = skip_ws(ke, e);
            *ws |= q != ke;
            if (q >= e || *q != ':')
                return NULL;
            const char *v = skip_ws(q + 1, e);
            *ws |= v != q + 1;
            q = v;
        }
        const char *end = check_value(q, e, depth + 1, ws);
        if (!end)
            return NULL;
        q = skip_ws(end, e);
        *ws |= q != end;
        if (q < e && *q == close)
            return q + 1;
        if (q >= e || *q != ',')
            return NULL;
        const char *n = skip_ws(q + 1, e);
        *ws |= n != q + 1;
        q = n;
    }
}

/* The end of any value at p (a member before "details": strings with escapes, fractions),
 * or NULL when it is not well-formed or nested deeper than COPY_DEPTH. */
static const char *skip_value(const char *p, const char *e, int depth)
{
    if (p >= e)
        return NULL;
    if (*p == '"') {
        for (p++; p < e; p++) {
            if (*p == '\\')
                p++;
            else if (*p == '"')
                return p + 1;
        }
        return NULL;
    }
    if (*p != '[' && *p != '{') {
        const char *q = p;
        while (q < e && ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'z') || *q == '-' ||
                         *q == '+' || *q == '.' || *q == 'E'))
            q++;
        return q > p ? q : NULL;
    }
    if (depth >= COPY_DEPTH)
        return NULL;
    bool obj = *p == '{';
    char close = obj ? '}' : ']';
    const char *q = skip_ws(p + 1, e);
    if (q < e && *q == close)
        return q + 1;
    for (;;) {
        if (obj) {
            q = skip_value(q, e, depth + 1); /* the key */
            q = q ? skip_ws(q, e) : NULL;
            if (!q || q >= e || *q != ':')
                return NULL;
            q = skip_ws(q + 1, e);
        }
        q = skip_value(q, e, depth + 1);
        q = q ? skip_ws(q, e) : NULL;
        if (!q || q >= e)
            return NULL;
        if (*q == close)
            return q + 1;
        if (*q != ',')
            return NULL;
        q = skip_ws(q + 1, e);
    }
}

/* Copy [p, end) without the whitespace outside strings. */
static void copy_stripped(const char *p, const char *end, struct trace_out *o)
{
    while (p < end) {
        const char *q = p;
        if (*q == '"') {
            q = plain_string(q, end); /* checked: plain */
        } else {
            while (q < end && *q != '"' && *q != ' ' && *q != '\n' && *q != '\r' && *q != '\t')
                q++;
        }
        trace_out_raw(o, p, (size_t)(q - p));
        p = skip_ws(q, end);
    }
}

/*
 * The value of the first member "details" of the event object at off: *v and *end, or
 * false when it cannot be found without parsing (a key with an escape, bad text).
 * *absent is set when the object has no such member.
 */
static bool find_details(const struct trace_detsrc *s, size_t off, const char **v, const char **end,
                         bool *absent)
{
    const char *e = s->p + s->n, *q = skip_ws(s->p + off, e);
    *absent = false;
    if (q >= e || *q != '{')
        return false;
    q = skip_ws(q + 1, e);
    if (q < e && *q == '}') {
        *absent = true;
        return true;
    }
    for (;;) {
        const char *ke = q < e && *q == '"' ? plain_string(q, e) : NULL;
        if (!ke)
            return false;
        bool is_details = ke - q == 9 && memcmp(q, "\"details\"", 9) == 0;
        q = skip_ws(ke, e);
        if (q >= e || *q != ':')
            return false;
        q = skip_ws(q + 1, e);
        if (is_details) {
            *v = q;
            *end = NULL;
            return true;
        }
        const char *ve = skip_value(q, e, 0);
        if (!ve)
            return false;
        q = skip_ws(ve, e);
        if (q < e && *q == '}') {
            *absent = true;
            return true;
        }
        if (q >= e || *q != ',')
            return false;
        q = skip_ws(q + 1, e);
    }
}

/* ---- writing ---------------------------------------------------------------------------- */

/* Give back the pages before off. */
static void release_upto(struct trace_detsrc *s, size_t off)
{
    if (off < s->released + RELEASE_STEP)
        return;
    size_t upto = off / (size_t)s->page * (size_t)s->page;
    madvise((void *)(s->p + s->released), upto - s->released, MADV_DONTNEED);
    s->released = upto;
}

/* As the model reads details from its file (trace_model_event_details), from s's map. */
static struct sim_value *parse_details(const struct trace_detsrc *s, size_t off)
{
    const char *end;
    cJSON *j = cJSON_ParseWithLengthOpts(s->p + off, s->n - off, &end, 0);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "details");
    struct sim_value *v = d && !cJSON_IsNull(d) ? trace_json_to_value(d) : NULL;
    cJSON_Delete(j);
    return v;
}

void trace_detsrc_write(struct trace_detsrc *s, const struct trace_model *m, uint64_t i,
                        const char *prefix, struct trace_out *o)
{
    const struct trace_event *e = trace_model_event(m, i);
    struct sim_value *det = NULL;
    if (!s || (e->flags & (TRACE_EV_INFLIGHT | TRACE_EV_OWN_DETAILS | TRACE_EV_PACKED)) ||
        e->details >= s->n) {
        det = trace_model_event_details(m, i);
    } else {
        size_t off = (size_t)e->details;
        release_upto(s, off);
        const char *v = NULL, *end = NULL;
        bool absent = false, ws = false;
        if (find_details(s, off, &v, &end, &absent)) {
            if (absent || lit(v, s->p + s->n, "null", 4))
                return;
            end = check_value(v, s->p + s->n, 0, &ws);
        }
        if (end) {
            trace_out_lit(o, prefix);
            if (ws)
                copy_stripped(v, end, o);
            else
                trace_out_raw(o, v, (size_t)(end - v));
            return;
        }
        det = parse_details(s, off);
    }
    if (!det)
        return;
    trace_out_lit(o, prefix);
    trace_out_value(o, det);
    sim_value_free(det);
}
