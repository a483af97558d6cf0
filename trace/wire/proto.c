/*
 * The protocol's messages (see proto.h): one writer and one reader per message type. A
 * reader takes the fields it knows and ignores what follows them (a later minor version
 * may append fields); every text field is bounded, every count is checked against the
 * bytes left before anything is allocated.
 */
#include "trace/wire/proto.h"

#include "sim/data/dtype.h"
#include "sim/util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static const uint8_t magic[8] = {'n', 'p', 'u', 's', 'c', 'o', 'p', 'e'};

/* ---- writing ----------------------------------------------------------------------------- */

void trace_proto_put_hello(struct trace_wire_buf *b, const struct trace_proto_hello *h)
{
    size_t f = trace_wire_frame_begin(b, TRACE_MSG_HELLO);
    trace_wire_put_raw(b, magic, sizeof(magic));
    trace_wire_put_u16(b, h->major);
    trace_wire_put_u16(b, h->minor);
    trace_wire_put_u8(b, h->role);
    trace_wire_frame_end(b, f);
}

void trace_proto_put_request(struct trace_wire_buf *b, const struct trace_proto_request *q)
{
    size_t f = trace_wire_frame_begin(b, TRACE_MSG_REQUEST);
    trace_wire_put_uv(b, q->id);
    trace_wire_put_uv(b, q->code);
    switch (q->code) {
    case TRACE_REQ_RUN_UNTIL:
    case TRACE_REQ_BREAK_REMOVE:
    case TRACE_REQ_DETAILS:
    case TRACE_REQ_MEM_LIST: trace_wire_put_uv(b, q->arg[0]); break;
    case TRACE_REQ_BREAK_ADD:
        trace_wire_put_u8(b, q->kind);
        trace_wire_put_str(b, q->text);
        break;
    case TRACE_REQ_STEP_LINE: trace_wire_put_str(b, q->text); break;
    case TRACE_REQ_MEM_READ:
        for (int i = 0; i < 4; i++)
            trace_wire_put_uv(b, q->arg[i]);
        break;
    default: break;
    }
    trace_wire_frame_end(b, f);
}

void trace_proto_put_bye(struct trace_wire_buf *b)
{
    trace_wire_frame_end(b, trace_wire_frame_begin(b, TRACE_MSG_BYE));
}

void trace_proto_put_welcome(struct trace_wire_buf *b, const struct trace_proto_welcome *w)
{
    size_t f = trace_wire_frame_begin(b, TRACE_MSG_WELCOME);
    trace_wire_put_raw(b, magic, sizeof(magic));
    trace_wire_put_u16(b, w->major);
    trace_wire_put_u16(b, w->minor);
    trace_wire_put_str(b, w->run_id);
    trace_wire_put_str(b, w->name);
    trace_wire_put_str(b, w->trace);
    trace_wire_put_uv(b, w->pid);
    trace_wire_put_u8(b, w->state);
    trace_wire_put_uv(b, w->now);
    trace_wire_put_f64(b, w->now_ns);
    trace_wire_put_uv(b, w->events);
    trace_wire_put_uv(b, w->viewers);
    trace_wire_frame_end(b, f);
}

static void put_text(struct trace_wire_buf *b, uint8_t type, const char *msg)
{
    size_t f = trace_wire_frame_begin(b, type);
    size_t n = msg ? strlen(msg) : 0;
    trace_wire_put_bytes(b, msg ? msg : "", n < TRACE_PROTO_MAX_TEXT ? n : TRACE_PROTO_MAX_TEXT);
    trace_wire_frame_end(b, f);
}

void trace_proto_put_error(struct trace_wire_buf *b, int code, const char *msg)
{
    size_t f = trace_wire_frame_begin(b, TRACE_MSG_ERROR);
    size_t n = msg ? strlen(msg) : 0;
    trace_wire_put_sv(b, code);
    trace_wire_put_bytes(b, msg ? msg : "", n < TRACE_PROTO_MAX_TEXT ? n : TRACE_PROTO_MAX_TEXT);
    trace_wire_frame_end(b, f);
}

void trace_proto_put_goodbye(struct trace_wire_buf *b, const char *reason)
{
    put_text(b, TRACE_MSG_GOODBYE, reason);
}

void trace_proto_put_status(struct trace_wire_buf *b, const struct trace_proto_status *s)
{
    size_t f = trace_wire_frame_begin(b, TRACE_MSG_STATUS);
    trace_wire_put_u8(b, s->state);
    trace_wire_put_uv(b, s->now);
    trace_wire_put_uv(b, s->events);
    trace_wire_put_f64(b, s->events_per_sec);
    trace_wire_put_uv(b, s->notice_rev);
    trace_wire_put_str(b, s->notice);
    trace_wire_put_str(b, s->last_event);
    trace_wire_put_str(b, s->speed);
    trace_wire_put_str(b, s->verify);
    trace_wire_put_uv(b, s->viewers);
    trace_wire_put_uv(b, s->mem_gen);
    trace_wire_put_uv(b, s->focus_rev);
    trace_wire_put_uv(b, s->focus == UINT64_MAX ? 0 : s->focus + 1);
    trace_wire_put_uv(b, s->breaks_rev);
    trace_wire_put_str(b, s->fired);
    trace_wire_frame_end(b, f);
}

void trace_proto_put_breaks(struct trace_wire_buf *b, uint64_t rev, const char *const *text,
                            size_t n)
{
    size_t f = trace_wire_frame_begin(b, TRACE_MSG_BREAKS);
    trace_wire_put_uv(b, rev);
    if (n > TRACE_PROTO_MAX_BREAKS)
        n = TRACE_PROTO_MAX_BREAKS;
    trace_wire_put_uv(b, n);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(text[i]);
        trace_wire_put_bytes(b, text[i], len < 256 ? len : 256);
    }
    trace_wire_frame_end(b, f);
}

void trace_proto_put_result(struct trace_wire_buf *b, uint64_t id, int rc, const char *msg)
{
    size_t f = trace_wire_frame_begin(b, TRACE_MSG_RESULT);
    trace_wire_put_uv(b, id);
    trace_wire_put_sv(b, rc);
    trace_wire_put_str(b, msg);
    trace_wire_frame_end(b, f);
}

void trace_proto_put_details(struct trace_wire_buf *b, uint64_t id, uint64_t event, uint64_t xfers,
                             const struct sim_value *details)
{
    size_t f = trace_wire_frame_begin(b, TRACE_MSG_DETAILS);
    trace_wire_put_uv(b, id);
    trace_wire_put_uv(b, event);
    trace_wire_put_uv(b, xfers);
    trace_wire_put_value(b, details);
    trace_wire_frame_end(b, f);
}

static void put_entry(struct trace_wire_buf *b, const struct trace_proto_mem_entry *e)
{
    trace_wire_put_uv(b, e->addr);
    trace_wire_put_u8(b, e->dtype);
    trace_wire_put_u8(b, e->ndim);
    for (unsigned k = 0; k < e->ndim && k < SIM_MAX_DIMS; k++)
        trace_wire_put_sv(b, e->shape[k]);
    trace_wire_put_uv(b, e->nbytes);
    trace_wire_put_str(b, e->writer);
    trace_wire_put_f64(b, e->t_ns);
    trace_wire_put_str(b, e->pattern);
}

void trace_proto_put_memlist(struct trace_wire_buf *b, const struct trace_proto_memlist *l,
                             size_t budget)
{
    size_t f = trace_wire_frame_begin(b, TRACE_MSG_MEMLIST);
    trace_wire_put_uv(b, l->id);
    trace_wire_put_uv(b, l->gen);
    size_t ns = l->nspaces < TRACE_PROTO_MAX_SPACES ? l->nspaces : TRACE_PROTO_MAX_SPACES;
    trace_wire_put_uv(b, ns);
    for (size_t i = 0; i < ns; i++) {
        trace_wire_put_str(b, l->spaces[i].name);
        trace_wire_put_uv(b, l->spaces[i].len);
    }
    trace_wire_put_uv(b, l->space);
    /* the count goes first: find how many fit */
    struct trace_wire_buf tmp = {0};
    size_t n = 0;
    for (; n < l->n && tmp.len < budget; n++)
        put_entry(&tmp, &l->entries[n]);
    trace_wire_put_u8(b, l->truncated || n < l->n);
    trace_wire_put_uv(b, n);
    trace_wire_put_raw(b, tmp.p, tmp.len);
    trace_wire_buf_fini(&tmp);
    trace_wire_frame_end(b, f);
}

void trace_proto_put_memread(struct trace_wire_buf *b, const struct trace_proto_memread *r)
{
    size_t f = trace_wire_frame_begin(b, TRACE_MSG_MEMREAD);
    trace_wire_put_uv(b, r->id);
    trace_wire_put_uv(b, r->space);
    trace_wire_put_uv(b, r->addr);
    trace_wire_put_uv(b, r->off);
    trace_wire_put_uv(b, r->gen);
    trace_wire_put_u8(b, r->gone ? 1 : 0);
    size_t n = r->len < TRACE_PROTO_MAX_READ ? r->len : TRACE_PROTO_MAX_READ;
    trace_wire_put_bytes(b, r->data, r->gone ? 0 : n);
    trace_wire_frame_end(b, f);
}

/* ---- reading ------------------------------------------------------------------------------ */

static int done(struct trace_wire_rd *r, const char *msg, struct diag *d)
{
    if (trace_wire_rd_ok(r))
        return 0;
    return diag_set(d, SIM_EPARSE, NULL, 0, 0, NULL, "%s message: %s", msg, r->what);
}

/* A text field into buf (size bytes, truncated, NUL-terminated). */
static void get_text(struct trace_wire_rd *r, char *buf, size_t size, size_t max)
{
    size_t n;
    const uint8_t *p = trace_wire_get_bytes(r, max, &n);
    if (!p) {
        buf[0] = '\0';
        return;
    }
    if (n >= size)
        n = size - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
}

static void check_magic(struct trace_wire_rd *r)
{
    const uint8_t *m = trace_wire_get_raw(r, sizeof(magic));
    if (m && memcmp(m, magic, sizeof(magic)) != 0)
        trace_wire_rd_fail(r, "not an npuscope peer (wrong magic)");
}

int trace_proto_get_hello(const uint8_t *p, size_t n, struct trace_proto_hello *h, struct diag *d)
{
    struct trace_wire_rd r;
    trace_wire_rd_init(&r, p, n);
    check_magic(&r);
    h->major = trace_wire_get_u16(&r);
    h->minor = trace_wire_get_u16(&r);
    h->role = trace_wire_get_u8(&r);
    if (trace_wire_rd_ok(&r) && h->major != TRACE_PROTO_MAJOR)
        return diag_set(d, SIM_EPARSE, NULL, 0, 0, NULL,
                        "protocol version %u.%u is not this run's (%d.%d): attach with the "
                        "npuscope version that started the run (%s)",
                        h->major, h->minor, TRACE_PROTO_MAJOR, TRACE_PROTO_MINOR, NPUSCOPE_VERSION);
    if (trace_wire_rd_ok(&r) && (h->role < TRACE_ROLE_VIEWER || h->role > TRACE_ROLE_CONTROL))
        trace_wire_rd_fail(&r, "unknown role");
    return done(&r, "HELLO", d);
}

int trace_proto_get_request(const uint8_t *p, size_t n, struct trace_proto_request *q,
                            struct diag *d)
{
    struct trace_wire_rd r;
    trace_wire_rd_init(&r, p, n);
    memset(q, 0, sizeof(*q));
    q->id = trace_wire_get_uv(&r);
    q->code = trace_wire_get_uv(&r);
    switch (q->code) {
    case TRACE_REQ_RUN_UNTIL:
    case TRACE_REQ_BREAK_REMOVE:
    case TRACE_REQ_DETAILS:
    case TRACE_REQ_MEM_LIST: q->arg[0] = trace_wire_get_uv(&r); break;
    case TRACE_REQ_BREAK_ADD: {
        q->kind = trace_wire_get_u8(&r);
        if (trace_wire_rd_ok(&r) && q->kind > 4)
            trace_wire_rd_fail(&r, "unknown breakpoint kind");
        size_t len;
        const uint8_t *t = trace_wire_get_bytes(&r, TRACE_PROTO_MAX_PATTERN, &len);
        if (t && memchr(t, 0, len))
            trace_wire_rd_fail(&r, "a pattern holding a NUL byte");
        else if (t)
            memcpy(q->text, t, len);
        break;
    }
    case TRACE_REQ_STEP_LINE: {
        size_t len;
        const uint8_t *t = trace_wire_get_bytes(&r, TRACE_PROTO_MAX_PATTERN, &len);
        if (t && memchr(t, 0, len))
            trace_wire_rd_fail(&r, "a PE holding a NUL byte");
        else if (t)
            memcpy(q->text, t, len);
        break;
    }
    case TRACE_REQ_MEM_READ:
        for (int i = 0; i < 4; i++)
            q->arg[i] = trace_wire_get_uv(&r);
        if (trace_wire_rd_ok(&r) && q->arg[3] > TRACE_PROTO_MAX_READ)
            trace_wire_rd_fail(&r, "a read longer than the limit");
        break;
    default: break; /* no arguments, or a request of a later version: answered by id */
    }
    return done(&r, "REQUEST", d);
}

int trace_proto_get_welcome(const uint8_t *p, size_t n, struct trace_proto_welcome *w,
                            struct diag *d)
{
    struct trace_wire_rd r;
    trace_wire_rd_init(&r, p, n);
    memset(w, 0, sizeof(*w));
    check_magic(&r);
    w->major = trace_wire_get_u16(&r);
    w->minor = trace_wire_get_u16(&r);
    if (trace_wire_rd_ok(&r) && w->major != TRACE_PROTO_MAJOR)
        return diag_set(d, SIM_EPARSE, NULL, 0, 0, NULL,
                        "the run speaks protocol version %u.%u, this npuscope %d.%d: attach "
                        "with the npuscope version that started the run",
                        w->major, w->minor, TRACE_PROTO_MAJOR, TRACE_PROTO_MINOR);
    get_text(&r, w->run_id, sizeof(w->run_id), TRACE_PROTO_MAX_TEXT);
    get_text(&r, w->name, sizeof(w->name), TRACE_PROTO_MAX_TEXT);
    get_text(&r, w->trace, sizeof(w->trace), TRACE_PROTO_MAX_TEXT);
    w->pid = trace_wire_get_uv(&r);
    w->state = trace_wire_get_u8(&r);
    w->now = trace_wire_get_uv(&r);
    w->now_ns = trace_wire_get_f64(&r);
    w->events = trace_wire_get_uv(&r);
    w->viewers = trace_wire_get_uv(&r);
    if (trace_wire_rd_ok(&r) && w->state > TRACE_RUN_FINISHED)
        trace_wire_rd_fail(&r, "unknown run state");
    return done(&r, "WELCOME", d);
}

int trace_proto_get_error(const uint8_t *p, size_t n, int *code, char *msg, size_t size,
                          struct diag *d)
{
    struct trace_wire_rd r;
    trace_wire_rd_init(&r, p, n);
    int64_t c = trace_wire_get_sv(&r);
    *code = c < 0 && c > -1000 ? (int)c : -SIM_EINVAL;
    get_text(&r, msg, size, TRACE_PROTO_MAX_TEXT);
    return done(&r, "ERROR", d);
}

int trace_proto_get_goodbye(const uint8_t *p, size_t n, char *msg, size_t size, struct diag *d)
{
    struct trace_wire_rd r;
    trace_wire_rd_init(&r, p, n);
    get_text(&r, msg, size, TRACE_PROTO_MAX_TEXT);
    return done(&r, "GOODBYE", d);
}

int trace_proto_get_status(const uint8_t *p, size_t n, struct trace_proto_status *s, struct diag *d)
{
    struct trace_wire_rd r;
    trace_wire_rd_init(&r, p, n);
    memset(s, 0, sizeof(*s));
    s->state = trace_wire_get_u8(&r);
    s->now = trace_wire_get_uv(&r);
    s->events = trace_wire_get_uv(&r);
    s->events_per_sec = trace_wire_get_f64(&r);
    s->notice_rev = trace_wire_get_uv(&r);
    get_text(&r, s->notice, sizeof(s->notice), TRACE_PROTO_MAX_TEXT);
    get_text(&r, s->last_event, sizeof(s->last_event), TRACE_PROTO_MAX_TEXT);
    get_text(&r, s->speed, sizeof(s->speed), TRACE_PROTO_MAX_TEXT);
    get_text(&r, s->verify, sizeof(s->verify), TRACE_PROTO_MAX_TEXT);
    s->viewers = trace_wire_get_uv(&r);
    s->mem_gen = trace_wire_get_uv(&r);
    s->focus_rev = trace_wire_get_uv(&r);
    uint64_t focus = trace_wire_get_uv(&r);
    s->focus = focus ? focus - 1 : UINT64_MAX;
    s->breaks_rev = trace_wire_get_uv(&r);
    if (trace_wire_rd_ok(&r) && trace_wire_rd_left(&r)) /* optional: read when there */
        get_text(&r, s->fired, sizeof(s->fired), TRACE_PROTO_MAX_TEXT);
    if (trace_wire_rd_ok(&r) && s->state > TRACE_RUN_FINISHED)
        trace_wire_rd_fail(&r, "unknown run state");
    if (trace_wire_rd_ok(&r) && !(s->events_per_sec >= 0 && s->events_per_sec < 1e18))
        s->events_per_sec = 0; /* NaN, infinite or negative: unknown */
    return done(&r, "STATUS", d);
}

int trace_proto_get_breaks(const uint8_t *p, size_t n, uint64_t *rev, char ***text, size_t *count,
                           struct diag *d)
{
    struct trace_wire_rd r;
    trace_wire_rd_init(&r, p, n);
    *text = NULL;
    *count = 0;
    *rev = trace_wire_get_uv(&r);
    uint64_t k = trace_wire_get_uv(&r);
    if (trace_wire_rd_ok(&r) && (k > TRACE_PROTO_MAX_BREAKS || k > trace_wire_rd_left(&r)))
        trace_wire_rd_fail(&r, "too many breakpoints");
    if (!trace_wire_rd_ok(&r))
        return done(&r, "BREAKS", d);
    /* one allocation: the pointers, then the strings */
    size_t bytes = (size_t)k * sizeof(char *);
    struct trace_wire_rd scan = r;
    for (uint64_t i = 0; i < k; i++) {
        size_t len;
        if (!trace_wire_get_bytes(&scan, 256, &len))
            break;
        bytes += len + 1;
    }
    if (!trace_wire_rd_ok(&scan))
        return done(&scan, "BREAKS", d);
    char **v = sim_xmalloc(bytes ? bytes : 1);
    char *s = (char *)(v + k);
    for (uint64_t i = 0; i < k; i++) {
        size_t len;
        const uint8_t *b = trace_wire_get_bytes(&r, 256, &len);
        memcpy(s, b, len);
        s[len] = '\0';
        v[i] = s;
        s += len + 1;
    }
    *text = v;
    *count = (size_t)k;
    return 0;
}

int trace_proto_get_result(const uint8_t *p, size_t n, struct trace_proto_result *res,
                           struct diag *d)
{
    struct trace_wire_rd r;
    trace_wire_rd_init(&r, p, n);
    memset(res, 0, sizeof(*res));
    res->id = trace_wire_get_uv(&r);
    res->rc = trace_wire_get_sv(&r);
    get_text(&r, res->msg, sizeof(res->msg), TRACE_PROTO_MAX_TEXT);
    if (trace_wire_rd_ok(&r) && (res->rc > 0 || res->rc < -1000))
        trace_wire_rd_fail(&r, "result code out of range");
    return done(&r, "RESULT", d);
}

int trace_proto_get_details(const uint8_t *p, size_t n, uint64_t *id, uint64_t *event,
                            uint64_t *xfers, struct sim_value **details, struct diag *d)
{
    struct trace_wire_rd r;
    trace_wire_rd_init(&r, p, n);
    *id = trace_wire_get_uv(&r);
    *event = trace_wire_get_uv(&r);
    *xfers = trace_wire_get_uv(&r);
    *details = trace_wire_get_value(&r);
    if (!trace_wire_rd_ok(&r)) {
        sim_value_free(*details);
        *details = NULL;
    }
    return done(&r, "DETAILS", d);
}

static void get_entry(struct trace_wire_rd *r, struct trace_proto_mem_entry *e)
{
    e->addr = trace_wire_get_uv(r);
    e->dtype = trace_wire_get_u8(r);
    e->ndim = trace_wire_get_u8(r);
    if (trace_wire_rd_ok(r) && (e->dtype >= SIM_DTYPE_COUNT || e->ndim > SIM_MAX_DIMS)) {
        trace_wire_rd_fail(r, "a tensor of unknown dtype or rank");
        return;
    }
    for (unsigned k = 0; k < e->ndim; k++) {
        e->shape[k] = trace_wire_get_sv(r);
        if (trace_wire_rd_ok(r) && e->shape[k] < 0)
            trace_wire_rd_fail(r, "a negative dimension");
    }
    e->nbytes = trace_wire_get_uv(r);
    get_text(r, e->writer, sizeof(e->writer), TRACE_PROTO_MAX_TEXT);
    e->t_ns = trace_wire_get_f64(r);
    get_text(r, e->pattern, sizeof(e->pattern), TRACE_PROTO_MAX_TEXT);
}

int trace_proto_get_memlist(const uint8_t *p, size_t n, struct trace_proto_memlist *l,
                            struct diag *d)
{
    struct trace_wire_rd r;
    trace_wire_rd_init(&r, p, n);
    memset(l, 0, sizeof(*l));
    l->id = trace_wire_get_uv(&r);
    l->gen = trace_wire_get_uv(&r);
    uint64_t ns = trace_wire_get_uv(&r);
    if (trace_wire_rd_ok(&r) && ns > TRACE_PROTO_MAX_SPACES)
        trace_wire_rd_fail(&r, "too many memory spaces");
    for (uint64_t i = 0; i < ns && trace_wire_rd_ok(&r); i++) {
        get_text(&r, l->spaces[i].name, sizeof(l->spaces[i].name), TRACE_PROTO_MAX_TEXT);
        l->spaces[i].len = trace_wire_get_uv(&r);
    }
    l->nspaces = trace_wire_rd_ok(&r) ? (size_t)ns : 0;
    l->space = trace_wire_get_uv(&r);
    l->truncated = trace_wire_get_u8(&r) != 0;
    uint64_t k = trace_wire_get_uv(&r);
    /* an entry takes 14 bytes at least */
    if (trace_wire_rd_ok(&r) && k > trace_wire_rd_left(&r) / 14)
        trace_wire_rd_fail(&r, "count beyond the message");
    if (!trace_wire_rd_ok(&r))
        return done(&r, "MEMLIST", d);
    l->entries = sim_xcalloc(k ? (size_t)k : 1, sizeof(*l->entries));
    for (uint64_t i = 0; i < k && trace_wire_rd_ok(&r); i++)
        get_entry(&r, &l->entries[i]);
    l->n = (size_t)k;
    if (!trace_wire_rd_ok(&r))
        trace_proto_memlist_fini(l);
    return done(&r, "MEMLIST", d);
}

void trace_proto_memlist_fini(struct trace_proto_memlist *l)
{
    free(l->entries);
    l->entries = NULL;
    l->n = 0;
}

int trace_proto_get_memread(const uint8_t *p, size_t n, struct trace_proto_memread *m,
                            struct diag *d)
{
    struct trace_wire_rd r;
    trace_wire_rd_init(&r, p, n);
    memset(m, 0, sizeof(*m));
    m->id = trace_wire_get_uv(&r);
    m->space = trace_wire_get_uv(&r);
    m->addr = trace_wire_get_uv(&r);
    m->off = trace_wire_get_uv(&r);
    m->gen = trace_wire_get_uv(&r);
    m->gone = trace_wire_get_u8(&r) != 0;
    m->data = trace_wire_get_bytes(&r, TRACE_PROTO_MAX_READ, &m->len);
    if (!trace_wire_rd_ok(&r))
        m->data = NULL, m->len = 0;
    return done(&r, "MEMREAD", d);
}

const char *trace_proto_msg_name(uint8_t type)
{
    switch (type) {
    case TRACE_MSG_HELLO: return "HELLO";
    case TRACE_MSG_REQUEST: return "REQUEST";
    case TRACE_MSG_BYE: return "BYE";
    case TRACE_MSG_WELCOME: return "WELCOME";
    case TRACE_MSG_ERROR: return "ERROR";
    case TRACE_MSG_MODEL: return "MODEL";
    case TRACE_MSG_STATUS: return "STATUS";
    case TRACE_MSG_BREAKS: return "BREAKS";
    case TRACE_MSG_RESULT: return "RESULT";
    case TRACE_MSG_DETAILS: return "DETAILS";
    case TRACE_MSG_MEMLIST: return "MEMLIST";
    case TRACE_MSG_MEMREAD: return "MEMREAD";
    case TRACE_MSG_GOODBYE: return "GOODBYE";
    default: return "unknown";
    }
}
