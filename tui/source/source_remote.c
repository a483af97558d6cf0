/*
 * The remote source (see tui_source_remote_open in source.h): a served run seen through
 * its socket. The model is a mirror (trace/wire/mirror.h) the run's MODEL messages fill; the
 * header's state, the breakpoints and the op to show come with STATUS and BREAKS; an op's
 * details, a space's tensors and a window of a tensor's bytes are asked for when a pane
 * needs them and arrive later (the generation moves). Controls are requests answered by
 * the run: the source waits for the answer, taking in what comes before it, so after a
 * step the model already shows the step.
 *
 * Everything the run sends is checked (trace/wire/proto.h, trace/wire/mirror.h); a message that
 * fails ends the connection with the reason in the status line. Text the header draws as
 * trusted (notices, the last event, breakpoints) is made safe here: controls, bidi and
 * invalid UTF-8 become escapes, as the run's own escapes are left as they are.
 */
#include "tui/source/source.h"

#include "sim/data/dtype.h"
#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/wire/mirror.h"
#include "trace/wire/proto.h"
#include "tui/source/memview.h"
#include "tui/source/runsock.h"
#include "tui/source/serve.h"
#include "tui/term/view.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum {
    HELLO_MS = 5000,         /* the run answers HELLO within this */
    ANSWER_MS = 10000,       /* ... and a control within this */
    SLOW_ANSWER_MS = 120000, /* writing the trace and stopping take longer */
    READ_WINDOW = 16 * 1024, /* bytes of a tensor asked for at once */
};

struct remote;

/* The memory view over the socket. */
struct remote_mem {
    struct tui_memview base;
    struct remote *r;
};

struct remote {
    struct tui_source base;
    struct remote_mem mem;
    int fd; /* -1 once the connection is over */
    struct trace_wire_in in;
    struct trace_wire_buf out;
    struct trace_model *m; /* owned: the mirror */
    struct trace_proto_welcome w;
    struct trace_proto_status st; /* the last STATUS, texts made safe */
    bool have_status;
    char gone[SIM_DIAG_MSG_MAX]; /* why the connection ended, "" while it lasts */
    char notice[SIM_DIAG_MSG_MAX + 64];
    uint64_t notice_rev, server_notice_rev;
    char **breaks; /* owned, one allocation */
    size_t nbreaks;
    uint64_t next_id;
    /* the control waiting for its answer */
    uint64_t wait_id;
    bool answered;
    struct trace_proto_result res;
    /* the op the run wants shown */
    uint64_t focus_rev, focus;
    /* details: the event last asked for, and an answer waiting for its transfers */
    uint64_t det_ev;
    bool det_inflight;
    uint64_t pend_ev, pend_xfers;
    struct sim_value *pend_det; /* owned */
    bool have_pend;
    /* memory */
    uint64_t mem_rev; /* what generation() says */
    struct trace_proto_memlist list;
    bool have_list, list_asked;    /* a list is here; one is on its way */
    struct tui_mem_entry *entries; /* owned: list's entries as the pane reads them */
    uint8_t *win;                  /* owned: a window of a tensor's bytes */
    size_t win_len;
    uint64_t win_space, win_addr, win_off, win_gen;
    bool have_win, win_gone, win_asked; /* a window is here; one is on its way */
};

static struct remote *R_of(struct tui_source *s)
{
    return (struct remote *)s;
}

/* Text from the run that is drawn as it is: controls and the like escaped, the run's own
 * escapes (backslashes) kept. */
static void make_safe(const char *in, char *out, size_t size)
{
    size_t n = strlen(in), o = 0;
    for (size_t i = 0; i < n && o + 12 < size;) {
        uint32_t cp;
        size_t k = sim_utf8_decode(in + i, n - i, &cp);
        if (cp != '\\' && sim_escape_needed(cp))
            o += sim_escape_cp(cp, out + o);
        else if (cp == 0xFFFD && k == 1)
            o += sim_utf8_encode(cp, out + o);
        else
            memcpy(out + o, in + i, k), o += k;
        i += k;
    }
    out[o] = '\0';
}

static void set_notice(struct remote *r, const char *text)
{
    snprintf(r->notice, sizeof(r->notice), "%s", text);
    r->notice_rev++;
}

/* The connection is over: keep what was received, say why. */
static void go(struct remote *r, const char *why)
{
    if (r->fd < 0)
        return;
    close(r->fd);
    r->fd = -1;
    char safe[SIM_DIAG_MSG_MAX];
    make_safe(why, safe, sizeof(safe));
    snprintf(r->gone, sizeof(r->gone), "%s", safe);
    char line[sizeof(r->notice)];
    snprintf(line, sizeof(line), "detached: %s (what was received stays on screen)", safe);
    set_notice(r, line);
    r->mem_rev++;
}

/* ---- sending --------------------------------------------------------------------------- */

/* Send what is queued, waiting at most ms for room. */
static bool flush_out(struct remote *r, int ms)
{
    uint64_t t0 = tui_now_ns();
    while (r->fd >= 0 && r->out.len) {
        ssize_t n = send(r->fd, r->out.p, r->out.len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            trace_wire_buf_consume(&r->out, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int left = ms - (int)((tui_now_ns() - t0) / 1000000);
            if (left <= 0)
                return false;
            struct pollfd p = {.fd = r->fd, .events = POLLOUT};
            poll(&p, 1, left);
            continue;
        }
        go(r, "the connection to the run broke");
        return false;
    }
    return r->fd >= 0;
}

static uint64_t ask(struct remote *r, struct trace_proto_request *q)
{
    q->id = ++r->next_id;
    trace_proto_put_request(&r->out, q);
    flush_out(r, 1000);
    return q->id;
}

/* ---- receiving ------------------------------------------------------------------------- */

static void apply_pending_details(struct remote *r)
{
    if (!r->have_pend || trace_model_transfer_count(r->m) < r->pend_xfers)
        return;
    if (r->pend_ev < trace_model_event_count(r->m))
        trace_model_set_details_take(r->m, r->pend_ev, r->pend_det);
    else
        sim_value_free(r->pend_det);
    r->pend_det = NULL;
    r->have_pend = false;
}

static void on_status(struct remote *r, const struct trace_proto_status *s)
{
    struct trace_proto_status st = *s;
    make_safe(s->notice, st.notice, sizeof(st.notice));
    make_safe(s->last_event, st.last_event, sizeof(st.last_event));
    make_safe(s->speed, st.speed, sizeof(st.speed));
    make_safe(s->fired, st.fired, sizeof(st.fired));
    if (!r->have_status || st.notice_rev != r->server_notice_rev) {
        r->server_notice_rev = st.notice_rev;
        if (st.notice[0] && r->have_status)
            set_notice(r, st.notice);
    }
    if (!r->have_status || st.mem_gen != r->st.mem_gen)
        r->mem_rev++;
    if (st.focus_rev != r->focus_rev) {
        r->focus_rev = st.focus_rev;
        r->focus = st.focus;
    }
    r->st = st;
    r->have_status = true;
}

static void on_breaks(struct remote *r, const uint8_t *p, size_t n, struct diag *d, int *rc)
{
    uint64_t rev;
    char **text;
    size_t k;
    *rc = trace_proto_get_breaks(p, n, &rev, &text, &k, d);
    if (*rc < 0)
        return;
    /* made safe in place: each string is rewritten into a fresh allocation */
    size_t bytes = k * sizeof(char *);
    char(*safe)[300] = sim_xcalloc(k ? k : 1, sizeof(*safe));
    for (size_t i = 0; i < k; i++) {
        make_safe(text[i], safe[i], sizeof(safe[i]));
        bytes += strlen(safe[i]) + 1;
    }
    char **v = sim_xmalloc(bytes ? bytes : 1);
    char *s = (char *)(v + k);
    for (size_t i = 0; i < k; i++) {
        size_t len = strlen(safe[i]);
        memcpy(s, safe[i], len + 1);
        v[i] = s;
        s += len + 1;
    }
    free(safe);
    free(text);
    free(r->breaks);
    r->breaks = v;
    r->nbreaks = k;
}

static void on_memlist(struct remote *r, struct trace_proto_memlist *l)
{
    trace_proto_memlist_fini(&r->list);
    r->list = *l;
    r->have_list = true;
    r->list_asked = false;
    free(r->entries);
    r->entries = sim_xcalloc(l->n ? l->n : 1, sizeof(*r->entries));
    for (size_t i = 0; i < l->n; i++) {
        const struct trace_proto_mem_entry *e = &l->entries[i];
        struct tui_mem_entry *x = &r->entries[i];
        x->addr = e->addr;
        x->dtype = e->dtype;
        x->ndim = e->ndim;
        memcpy(x->shape, e->shape, sizeof(x->shape));
        x->nbytes = e->nbytes;
        x->writer = e->writer[0] ? e->writer : NULL;
        x->t_ns = e->t_ns;
        x->pattern = e->pattern[0] ? e->pattern : NULL;
    }
    r->mem_rev++;
}

static void on_memread(struct remote *r, const struct trace_proto_memread *m)
{
    r->win_asked = false;
    free(r->win);
    r->win = sim_xmalloc(m->len ? m->len : 1);
    if (m->len)
        memcpy(r->win, m->data, m->len);
    r->win_len = m->len;
    r->win_space = m->space;
    r->win_addr = m->addr;
    r->win_off = m->off;
    r->win_gen = m->gen;
    r->win_gone = m->gone;
    r->have_win = true;
    r->mem_rev++;
}

/* One message from the run. Returns 0, or a negative code with d filled (the connection
 * is then dropped). */
static int on_frame(struct remote *r, const struct trace_wire_frame *f, struct diag *d)
{
    int rc = 0;
    switch (f->type) {
    case TRACE_MSG_MODEL:
        rc = trace_mirror_apply(r->m, f->body, f->len, d);
        apply_pending_details(r);
        return rc;
    case TRACE_MSG_STATUS: {
        struct trace_proto_status s;
        rc = trace_proto_get_status(f->body, f->len, &s, d);
        if (rc == 0)
            on_status(r, &s);
        return rc;
    }
    case TRACE_MSG_BREAKS: on_breaks(r, f->body, f->len, d, &rc); return rc;
    case TRACE_MSG_RESULT: {
        struct trace_proto_result res;
        rc = trace_proto_get_result(f->body, f->len, &res, d);
        if (rc == 0 && res.id == r->wait_id) {
            r->res = res;
            r->answered = true;
        }
        return rc;
    }
    case TRACE_MSG_DETAILS: {
        uint64_t id, ev, xfers;
        struct sim_value *det;
        rc = trace_proto_get_details(f->body, f->len, &id, &ev, &xfers, &det, d);
        if (rc < 0)
            return rc;
        if (ev >= UINT32_MAX) {
            sim_value_free(det);
            return diag_set(d, SIM_EPARSE, NULL, 0, 0, NULL, "DETAILS of no event");
        }
        sim_value_free(r->pend_det);
        r->pend_ev = ev, r->pend_xfers = xfers, r->pend_det = det, r->have_pend = true;
        apply_pending_details(r);
        return 0;
    }
    case TRACE_MSG_MEMLIST: {
        struct trace_proto_memlist l;
        rc = trace_proto_get_memlist(f->body, f->len, &l, d);
        if (rc == 0)
            on_memlist(r, &l);
        return rc;
    }
    case TRACE_MSG_MEMREAD: {
        struct trace_proto_memread m;
        rc = trace_proto_get_memread(f->body, f->len, &m, d);
        if (rc == 0)
            on_memread(r, &m);
        return rc;
    }
    case TRACE_MSG_ERROR:
    case TRACE_MSG_GOODBYE: {
        char msg[SIM_DIAG_MSG_MAX];
        int code = 0;
        rc = f->type == TRACE_MSG_ERROR
                 ? trace_proto_get_error(f->body, f->len, &code, msg, sizeof(msg), d)
                 : trace_proto_get_goodbye(f->body, f->len, msg, sizeof(msg), d);
        if (rc < 0)
            return rc;
        char why[SIM_DIAG_MSG_MAX + 32];
        snprintf(why, sizeof(why), "%s%s", f->type == TRACE_MSG_ERROR ? "the run says: " : "",
                 msg[0] ? msg : "the run has ended");
        go(r, why);
        return 0;
    }
    case TRACE_MSG_WELCOME: return diag_set(d, SIM_EPARSE, NULL, 0, 0, NULL, "a second WELCOME");
    default: return 0; /* a message of a later minor version */
    }
}

/* Take in whatever is there (waiting at most ms for the first bytes: 0 just looks), until
 * budget_ns is spent. */
static void take_in(struct remote *r, int ms, uint64_t budget_ns)
{
    uint64_t t0 = tui_now_ns();
    bool first = true;
    if (r->out.len)
        flush_out(r, 0); /* requests that did not fit before */
    while (r->fd >= 0) {
        struct trace_wire_frame f;
        const char *why = NULL;
        int rc;
        while (r->fd >= 0 && (rc = trace_wire_in_next(&r->in, &f, &why)) != 0) {
            struct diag d;
            diag_clear(&d);
            if (rc < 0 || on_frame(r, &f, &d) < 0) {
                char msg[SIM_DIAG_MSG_MAX + 64];
                snprintf(msg, sizeof(msg), "the run sent a broken message (%s)",
                         rc < 0 ? why : d.msg);
                go(r, msg);
                return;
            }
            if (tui_now_ns() - t0 > budget_ns)
                return;
        }
        if (r->fd < 0 || tui_now_ns() - t0 > budget_ns)
            return;
        struct pollfd p = {.fd = r->fd, .events = POLLIN};
        if (poll(&p, 1, first ? ms : 0) <= 0)
            return;
        first = false;
        size_t room;
        uint8_t *buf = trace_wire_in_room(&r->in, &room);
        ssize_t n = recv(r->fd, buf, room, MSG_DONTWAIT);
        if (n == 0) {
            go(r, "the run has ended (connection closed)");
            return;
        }
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
                go(r, "the connection to the run broke");
            return;
        }
        trace_wire_in_added(&r->in, (size_t)n);
    }
}

/* Send a control and wait for its answer, taking in everything before it. */
static int call(struct remote *r, struct trace_proto_request *q, int ms, struct diag *d)
{
    if (r->fd < 0)
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL, "not attached any more: %s", r->gone);
    r->answered = false;
    r->wait_id = ask(r, q);
    uint64_t t0 = tui_now_ns();
    while (!r->answered && r->fd >= 0) {
        int left = ms - (int)((tui_now_ns() - t0) / 1000000);
        if (left <= 0)
            return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL, "the run did not answer in %d s",
                            ms / 1000);
        take_in(r, left, UINT64_MAX);
    }
    r->wait_id = 0;
    if (!r->answered)
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL, "not attached any more: %s", r->gone);
    if (r->res.rc < 0) {
        char safe[SIM_DIAG_MSG_MAX];
        make_safe(r->res.msg, safe, sizeof(safe));
        int code = (int)-r->res.rc;
        return diag_set(d, code >= SIM_EIO && code <= SIM_ESTATE ? code : SIM_ESTATE, NULL, 0, 0,
                        NULL, "%s", safe);
    }
    return 0;
}

/* ---- the source ------------------------------------------------------------------------- */

static const struct trace_model *rm_model(struct tui_source *s)
{
    return R_of(s)->m;
}

static void rm_status(struct tui_source *s, struct tui_source_status *out)
{
    struct remote *r = R_of(s);
    const struct trace_proto_status *st = &r->st;
    enum tui_mode mode = r->fd < 0                         ? TUI_MODE_POSTMORTEM
                         : st->state == TRACE_RUN_FINISHED ? TUI_MODE_FINISHED
                         : st->state == TRACE_RUN_PAUSED   ? TUI_MODE_PAUSED
                                                           : TUI_MODE_LIVE;
    *out = (struct tui_source_status){
        .mode = mode,
        .name = r->w.name,
        .now = st->now,
        .events_done = st->events,
        .events_per_sec = mode == TUI_MODE_LIVE ? st->events_per_sec : 0,
        .notice = r->notice[0] ? r->notice : NULL,
        .notice_rev = r->notice_rev,
        .last_event = mode == TUI_MODE_PAUSED && st->last_event[0] ? st->last_event : NULL,
        .speed = st->speed[0] ? st->speed : NULL,
        .verify = st->verify[0] ? st->verify : NULL,
        .fired = mode == TUI_MODE_PAUSED && st->fired[0] ? st->fired : NULL,
        .viewers = r->fd >= 0 ? (unsigned)(st->viewers < 1000 ? st->viewers : 999) : 0,
    };
}

static bool rm_running(struct tui_source *s)
{
    struct remote *r = R_of(s);
    if (r->fd < 0)
        return false;
    if (trace_wire_in_ready(&r->in)) /* a whole frame waiting */
        return true;
    struct pollfd p = {.fd = r->fd, .events = POLLIN};
    return poll(&p, 1, 0) > 0;
}

static int rm_tick(struct tui_source *s, uint64_t budget_ns, struct diag *d)
{
    (void)d;
    take_in(R_of(s), 0, budget_ns);
    return 0;
}

static int rm_control(struct tui_source *s, enum tui_control c, struct diag *d)
{
    struct trace_proto_request q = {.code = tui_serve_req_of(c)};
    return call(R_of(s), &q, c == TUI_CTL_WRITE ? SLOW_ANSWER_MS : ANSWER_MS, d);
}

static int rm_run_until(struct tui_source *s, uint64_t cycle, struct diag *d)
{
    struct trace_proto_request q = {.code = TRACE_REQ_RUN_UNTIL, .arg = {cycle}};
    return call(R_of(s), &q, ANSWER_MS, d);
}

static int rm_break_add(struct tui_source *s, enum tui_break_kind kind, const char *pattern,
                        struct diag *d)
{
    struct trace_proto_request q = {.code = TRACE_REQ_BREAK_ADD, .kind = (uint8_t)kind};
    if (kind == TUI_BREAK_LINE && R_of(s)->w.minor < 1)
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                        "this run's npuscope (protocol 2.%u) has no line breakpoints",
                        (unsigned)R_of(s)->w.minor);
    if (strlen(pattern) > TRACE_PROTO_MAX_PATTERN)
        return diag_set(d, SIM_ELIMIT, NULL, 0, 0, NULL, "a pattern of %d bytes at most",
                        TRACE_PROTO_MAX_PATTERN);
    snprintf(q.text, sizeof(q.text), "%s", pattern);
    return call(R_of(s), &q, ANSWER_MS, d);
}

static int rm_step_line(struct tui_source *s, const char *pe, struct diag *d)
{
    struct trace_proto_request q = {.code = TRACE_REQ_STEP_LINE};
    if (R_of(s)->w.minor < 1)
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                        "this run's npuscope (protocol 2.%u) cannot step by line",
                        (unsigned)R_of(s)->w.minor);
    snprintf(q.text, sizeof(q.text), "%s", pe);
    return call(R_of(s), &q, ANSWER_MS, d);
}

static size_t rm_break_count(struct tui_source *s)
{
    return R_of(s)->nbreaks;
}

static void rm_break_describe(struct tui_source *s, size_t i, char *buf, size_t size)
{
    struct remote *r = R_of(s);
    snprintf(buf, size, "%s", i < r->nbreaks ? r->breaks[i] : "?");
}

static void rm_break_remove(struct tui_source *s, size_t i)
{
    struct trace_proto_request q = {.code = TRACE_REQ_BREAK_REMOVE, .arg = {i}};
    struct diag d;
    call(R_of(s), &q, ANSWER_MS, &d);
}

static uint64_t rm_take_focus(struct tui_source *s)
{
    struct remote *r = R_of(s);
    uint64_t f = r->focus;
    r->focus = UINT64_MAX;
    return f < trace_model_event_count(r->m) ? f : UINT64_MAX;
}

static int rm_wait_fd(struct tui_source *s)
{
    return R_of(s)->fd;
}

static void rm_want_details(struct tui_source *s, uint64_t ev)
{
    struct remote *r = R_of(s);
    if (r->fd < 0 || ev >= trace_model_event_count(r->m))
        return;
    bool inflight = trace_model_event(r->m, ev)->flags & TRACE_EV_INFLIGHT;
    /* asked already, unless it has ended since (its details are complete now) */
    if (ev == r->det_ev && (!r->det_inflight || inflight))
        return;
    r->det_ev = ev;
    r->det_inflight = inflight;
    struct trace_proto_request q = {.code = TRACE_REQ_DETAILS, .arg = {ev}};
    ask(r, &q);
}

static struct tui_memview *rm_memory(struct tui_source *s)
{
    return &R_of(s)->mem.base;
}

static void rm_free(struct tui_source *s)
{
    struct remote *r = R_of(s);
    if (r->fd >= 0) {
        trace_proto_put_bye(&r->out);
        flush_out(r, 100);
        close(r->fd);
    }
    trace_wire_in_fini(&r->in);
    trace_wire_buf_fini(&r->out);
    trace_model_free(r->m);
    free(r->breaks);
    sim_value_free(r->pend_det);
    trace_proto_memlist_fini(&r->list);
    free(r->entries);
    free(r->win);
    free(r);
}

static const struct tui_source_ops remote_ops = {
    .kind = "remote",
    .model = rm_model,
    .status = rm_status,
    .running = rm_running,
    .tick = rm_tick,
    .control = rm_control,
    .memstore = NULL,
    .free = rm_free,
    .wait_ms = NULL,
    .run_until = rm_run_until,
    .break_add = rm_break_add,
    .step_line = rm_step_line,
    .break_count = rm_break_count,
    .break_describe = rm_break_describe,
    .break_remove = rm_break_remove,
    .take_focus = rm_take_focus,
    .memory = rm_memory,
    .wait_fd = rm_wait_fd,
    .want_details = rm_want_details,
};

/* ---- memory ------------------------------------------------------------------------------ */

static struct remote *M_of(struct tui_memview *v)
{
    return ((struct remote_mem *)v)->r;
}

static uint64_t mv_generation(struct tui_memview *v)
{
    return M_of(v)->mem_rev;
}

/* Ask for space's list unless it is fresh or a list is on its way. */
static void want_list(struct remote *r, size_t space)
{
    bool fresh = r->have_list && r->list.space == space && r->list.gen == r->st.mem_gen;
    if (fresh || r->list_asked || r->fd < 0)
        return;
    r->list_asked = true;
    struct trace_proto_request q = {.code = TRACE_REQ_MEM_LIST, .arg = {space}};
    ask(r, &q);
}

static size_t mv_space_count(struct tui_memview *v)
{
    struct remote *r = M_of(v);
    want_list(r, r->have_list ? (size_t)r->list.space : 0);
    return r->have_list ? r->list.nspaces : 0;
}

static const char *mv_space_name(struct tui_memview *v, size_t i)
{
    struct remote *r = M_of(v);
    return r->have_list && i < r->list.nspaces ? r->list.spaces[i].name : NULL;
}

static size_t mv_space_len(struct tui_memview *v, size_t i)
{
    struct remote *r = M_of(v);
    return r->have_list && i < r->list.nspaces ? (size_t)r->list.spaces[i].len : 0;
}

static const struct tui_mem_entry *mv_entries(struct tui_memview *v, size_t i, size_t *n)
{
    struct remote *r = M_of(v);
    want_list(r, i);
    bool ours = r->have_list && r->list.space == i;
    *n = ours ? r->list.n : 0;
    return ours ? r->entries : NULL;
}

static int mv_read(struct tui_memview *v, size_t space, uint64_t addr, uint64_t off, size_t n,
                   void *buf)
{
    struct remote *r = M_of(v);
    bool same = r->have_win && r->win_space == space && r->win_addr == addr;
    bool fresh = same && r->win_gen == r->st.mem_gen;
    bool covered = same && !r->win_gone && off >= r->win_off && off - r->win_off + n <= r->win_len;
    if (covered)
        memcpy(buf, r->win + (off - r->win_off), n);
    if ((covered && fresh) || (same && fresh && r->win_gone))
        return covered ? 1 : -1;
    /* not here, or an older copy (shown meanwhile): ask for the window around it */
    uint64_t nbytes = 0;
    bool known = false;
    for (size_t i = 0; r->have_list && r->list.space == space && i < r->list.n && !known; i++)
        if (r->entries[i].addr == addr)
            nbytes = r->entries[i].nbytes, known = true;
    if (!known || off > nbytes || n > nbytes - off)
        return covered ? 1 : -1;
    if (!r->win_asked && r->fd >= 0) {
        uint64_t from = off - off % 4096;
        uint64_t len = nbytes - from < READ_WINDOW ? nbytes - from : READ_WINDOW;
        r->win_asked = true;
        struct trace_proto_request q = {.code = TRACE_REQ_MEM_READ,
                                        .arg = {space, addr, from, len}};
        ask(r, &q);
    }
    return covered ? 1 : 0;
}

static void mv_free(struct tui_memview *v)
{
    (void)v; /* part of the source */
}

static const struct tui_memview_ops remote_mem_ops = {
    .generation = mv_generation,
    .space_count = mv_space_count,
    .space_name = mv_space_name,
    .space_len = mv_space_len,
    .entries = mv_entries,
    .read = mv_read,
    .free = mv_free,
};

/* ---- opening -------------------------------------------------------------------------------- */

struct tui_source *tui_source_remote_open(const char *path, struct diag *d)
{
    int fd;
    if (tui_runsock_connect(path, &fd, d) < 0)
        return NULL;
    struct remote *r = sim_xcalloc(1, sizeof(*r));
    r->base.ops = &remote_ops;
    r->mem.base.ops = &remote_mem_ops;
    r->mem.r = r;
    r->fd = fd;
    r->m = trace_model_new();
    r->focus = UINT64_MAX;
    r->det_ev = UINT64_MAX;
    trace_wire_in_init(&r->in, TRACE_PROTO_MAX_TO_VIEWER);
    struct trace_proto_hello h = {TRACE_PROTO_MAJOR, TRACE_PROTO_MINOR, TRACE_ROLE_VIEWER};
    trace_proto_put_hello(&r->out, &h);
    if (!flush_out(r, HELLO_MS)) {
        diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "%s", r->gone[0] ? r->gone : "cannot say hello");
        goto fail;
    }
    /* the first answer: WELCOME, or why not */
    uint64_t t0 = tui_now_ns();
    for (;;) {
        struct trace_wire_frame f;
        const char *why = "";
        int rc = trace_wire_in_next(&r->in, &f, &why);
        if (rc < 0) {
            diag_set(d, SIM_EPARSE, NULL, 0, 0, NULL, "the run's answer is broken (%s)", why);
            goto fail;
        }
        if (rc > 0) {
            if (f.type == TRACE_MSG_ERROR) {
                char msg[SIM_DIAG_MSG_MAX], safe[SIM_DIAG_MSG_MAX];
                int code;
                if (trace_proto_get_error(f.body, f.len, &code, msg, sizeof(msg), d) == 0) {
                    make_safe(msg, safe, sizeof(safe));
                    diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL, "the run refused: %s", safe);
                }
                goto fail;
            }
            if (f.type != TRACE_MSG_WELCOME) {
                diag_set(d, SIM_EPARSE, NULL, 0, 0, NULL, "the run answered with %s, not WELCOME",
                         trace_proto_msg_name(f.type));
                goto fail;
            }
            if (trace_proto_get_welcome(f.body, f.len, &r->w, d) < 0)
                goto fail;
            break;
        }
        int left = HELLO_MS - (int)((tui_now_ns() - t0) / 1000000);
        struct pollfd p = {.fd = r->fd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, left) <= 0) {
            diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL, "the run did not answer in %d s",
                     HELLO_MS / 1000);
            goto fail;
        }
        size_t room;
        uint8_t *buf = trace_wire_in_room(&r->in, &room);
        ssize_t n = recv(r->fd, buf, room, 0);
        if (n <= 0) {
            diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "the run closed the connection at once");
            goto fail;
        }
        trace_wire_in_added(&r->in, (size_t)n);
    }
    r->st.state = r->w.state;
    r->st.now = r->w.now;
    r->st.events = r->w.events;
    r->st.viewers = r->w.viewers;
    char rid[160], line[sizeof(r->notice)];
    make_safe(r->w.run_id, rid, sizeof(rid));
    snprintf(line, sizeof(line), "attached to %s: q detaches, the run carries on", rid);
    set_notice(r, line);
    take_in(r, 0, 50 * 1000 * 1000); /* what came with the welcome */
    return &r->base;
fail:
    rm_free(&r->base);
    return NULL;
}
