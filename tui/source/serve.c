/*
 * The served run (see serve.h): the listening socket, the connections, and the loop that
 * runs the live source and feeds its viewers. Each connection has an input buffer of at
 * most one frame and one read, and an output buffer the loop adds updates to only when it
 * has drained; requests are answered one by one while that buffer is below OUT_SOFT, the
 * rest wait unread. A connection that sends garbage, too long a frame or another protocol
 * version gets an ERROR and is closed.
 */
#include "tui/source/serve.h"

#include "sim/data/dtype.h"
#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/wire/mirror.h"
#include "trace/wire/proto.h"
#include "tui/source/memview.h"
#include "tui/source/runsock.h"
#include "tui/term/view.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum {
    FRAME_NS = 33 * 1000 * 1000,      /* updates to viewers at most ~30 times a second */
    TICK_NS = 10 * 1000 * 1000,       /* a batch of events */
    HELLO_NS = 5000ull * 1000 * 1000, /* a connection says hello within this, or goes */
    MAX_CONNS = 64,                   /* connections at once */
    MODEL_BUDGET = 256 * 1024,        /* bytes of model per message */
    OUT_SOFT = 512 * 1024,            /* above this, a connection's requests wait */
    OUT_HARD = 4 * 1024 * 1024,       /* above this, a connection is dropped */
    MEMLIST_BUDGET = 900 * 1024,      /* bytes of tensor list per message */
};

enum conn_state {
    C_NEW,     /* no HELLO yet */
    C_VIEWER,  /* attach */
    C_QUERY,   /* ps */
    C_CONTROL, /* stop */
};

struct conn {
    int fd;
    enum conn_state state;
    bool closing; /* send what is queued, then close */
    uint64_t since_ns;
    struct trace_wire_in in;
    struct trace_wire_buf out;
    struct trace_mirror_tx tx;
    struct trace_proto_status sent; /* the last status sent */
    bool status_sent;
    uint64_t breaks_sent; /* breaks_rev + 1 of the list sent, 0: none */
};

struct tui_server {
    struct tui_source *src;                  /* borrowed: a live source */
    char *path, *run_id, *name, *trace_path; /* owned */
    bool registered, noted, linger;
    int lfd;
    struct tui_runsock_bound bound;
    struct conn *conns[MAX_CONNS];
    size_t nconns;
    uint64_t last_push;
    enum tui_serve_end end;
    int signo;
    /* what every viewer is told */
    struct trace_proto_status status;
    uint64_t focus_rev, focus;
    char **breaks; /* owned: the breakpoint descriptions last seen */
    size_t nbreaks;
    uint64_t breaks_rev;
};

/* ---- signals: a self-pipe --------------------------------------------------------------- */

static int sig_pipe[2] = {-1, -1};
static volatile sig_atomic_t sig_got;

static void on_signal(int signo)
{
    int saved = errno;
    sig_got = signo;
    if (sig_pipe[1] >= 0) {
        char b = 1;
        ssize_t r = write(sig_pipe[1], &b, 1);
        (void)r;
    }
    errno = saved;
}

/* ---- controls and requests --------------------------------------------------------------- */

static const struct {
    enum tui_control ctl;
    uint64_t req;
} control_reqs[] = {
    {TUI_CTL_PAUSE, TRACE_REQ_PAUSE},     {TUI_CTL_STEP, TRACE_REQ_STEP},
    {TUI_CTL_STEP_OP, TRACE_REQ_STEP_OP}, {TUI_CTL_CONTINUE, TRACE_REQ_CONTINUE},
    {TUI_CTL_FASTER, TRACE_REQ_FASTER},   {TUI_CTL_SLOWER, TRACE_REQ_SLOWER},
    {TUI_CTL_WRITE, TRACE_REQ_WRITE},
};

uint64_t tui_serve_req_of(enum tui_control c)
{
    for (size_t i = 0; i < sizeof(control_reqs) / sizeof(control_reqs[0]); i++)
        if (control_reqs[i].ctl == c)
            return control_reqs[i].req;
    return 0;
}

bool tui_serve_control_of(uint64_t req, enum tui_control *c)
{
    for (size_t i = 0; i < sizeof(control_reqs) / sizeof(control_reqs[0]); i++)
        if (control_reqs[i].req == req) {
            *c = control_reqs[i].ctl;
            return true;
        }
    return false;
}

/* ---- connections ---------------------------------------------------------------------------- */

static void conn_free(struct conn *c)
{
    close(c->fd);
    trace_wire_in_fini(&c->in);
    trace_wire_buf_fini(&c->out);
    trace_mirror_tx_fini(&c->tx);
    free(c);
}

/* Send what is queued without blocking; false when the connection broke. */
static bool flush(struct conn *c)
{
    while (c->out.len) {
        ssize_t n = send(c->fd, c->out.p, c->out.len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            trace_wire_buf_consume(&c->out, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
    return true;
}

/* Refuse or drop a connection with a message; it closes once that is sent. */
static void conn_error(struct conn *c, int code, const char *msg)
{
    trace_proto_put_error(&c->out, code, msg);
    c->closing = true;
    flush(c);
}

unsigned tui_server_viewers(const struct tui_server *s)
{
    unsigned n = 0;
    for (size_t i = 0; i < s->nconns; i++)
        n += s->conns[i]->state == C_VIEWER && !s->conns[i]->closing;
    return n;
}

static enum trace_run_state run_state(enum tui_mode m)
{
    return m == TUI_MODE_FINISHED ? TRACE_RUN_FINISHED
           : m == TUI_MODE_PAUSED ? TRACE_RUN_PAUSED
                                  : TRACE_RUN_RUNNING;
}

static void copy_text(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

/* The state every viewer is told, as of now. */
static void take_status(struct tui_server *s)
{
    struct tui_source *src = s->src;
    uint64_t f = src->ops->take_focus ? src->ops->take_focus(src) : UINT64_MAX;
    if (f != UINT64_MAX) {
        s->focus = f;
        s->focus_rev++;
    }
    struct tui_source_status st;
    src->ops->status(src, &st);
    struct trace_proto_status *p = &s->status;
    p->state = (uint8_t)run_state(st.mode);
    p->now = st.now;
    p->events = st.events_done;
    p->events_per_sec = st.events_per_sec;
    p->notice_rev = st.notice_rev;
    copy_text(p->notice, sizeof(p->notice), st.notice);
    copy_text(p->last_event, sizeof(p->last_event), st.last_event);
    copy_text(p->speed, sizeof(p->speed), st.speed);
    copy_text(p->verify, sizeof(p->verify), st.verify);
    copy_text(p->fired, sizeof(p->fired), st.fired);
    p->viewers = tui_server_viewers(s);
    struct tui_memview *mem = src->ops->memory ? src->ops->memory(src) : NULL;
    p->mem_gen = mem ? mem->ops->generation(mem) : 0;
    p->focus_rev = s->focus_rev;
    p->focus = s->focus;
    /* the breakpoints: described again (hit counts move), a new revision when they differ */
    size_t n = src->ops->break_count ? src->ops->break_count(src) : 0;
    bool same = n == s->nbreaks;
    char **v = sim_xcalloc(n ? n : 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) {
        char buf[256];
        src->ops->break_describe(src, i, buf, sizeof(buf));
        v[i] = sim_xstrdup(buf);
        same = same && strcmp(v[i], s->breaks[i]) == 0;
    }
    if (same) {
        for (size_t i = 0; i < n; i++)
            free(v[i]);
        free(v);
    } else {
        for (size_t i = 0; i < s->nbreaks; i++)
            free(s->breaks[i]);
        free(s->breaks);
        s->breaks = v;
        s->nbreaks = n;
        s->breaks_rev++;
    }
    p->breaks_rev = s->breaks_rev;
}

static bool status_differs(const struct trace_proto_status *a, const struct trace_proto_status *b)
{
    return a->state != b->state || a->now != b->now || a->events != b->events ||
           a->events_per_sec != b->events_per_sec || a->notice_rev != b->notice_rev ||
           strcmp(a->last_event, b->last_event) != 0 || strcmp(a->speed, b->speed) != 0 ||
           strcmp(a->verify, b->verify) != 0 || a->viewers != b->viewers ||
           a->mem_gen != b->mem_gen || a->focus_rev != b->focus_rev ||
           a->breaks_rev != b->breaks_rev || strcmp(a->fired, b->fired) != 0;
}

/* Queue what viewer c has not seen: model (when its buffer is small), state, breakpoints. */
static void push(struct tui_server *s, struct conn *c, bool forced)
{
    const struct trace_model *m = s->src->ops->model(s->src);
    if (c->out.len < (forced ? 64 * 1024 : 1) && trace_mirror_pending(&c->tx, m)) {
        size_t f = trace_wire_frame_begin(&c->out, TRACE_MSG_MODEL);
        trace_mirror_encode(&c->tx, m, &c->out, MODEL_BUDGET);
        if (trace_wire_frame_end(&c->out, f) > TRACE_PROTO_MAX_TO_VIEWER) {
            c->out.len = f;
            conn_error(c, -SIM_ELIMIT, "the model holds an item too large to send");
            return;
        }
    }
    if (!c->status_sent || status_differs(&c->sent, &s->status)) {
        trace_proto_put_status(&c->out, &s->status);
        c->sent = s->status;
        c->status_sent = true;
    }
    if (c->breaks_sent != s->breaks_rev + 1) {
        trace_proto_put_breaks(&c->out, s->breaks_rev, (const char *const *)s->breaks, s->nbreaks);
        c->breaks_sent = s->breaks_rev + 1;
    }
}

/* Updates to every viewer whose buffer has drained: a slow one gets them later, coarser. */
static void push_all(struct tui_server *s)
{
    if (!tui_server_viewers(s))
        return;
    take_status(s);
    for (size_t i = 0; i < s->nconns; i++) {
        struct conn *c = s->conns[i];
        if (c->state != C_VIEWER || c->closing || c->out.len)
            continue;
        push(s, c, false);
        if (!flush(c))
            c->closing = true, c->out.len = 0;
    }
}

/* True when every viewer has been told everything (its model, state and breakpoints). */
static bool all_pushed(struct tui_server *s)
{
    if (!tui_server_viewers(s))
        return true;
    take_status(s);
    const struct trace_model *m = s->src->ops->model(s->src);
    for (size_t i = 0; i < s->nconns; i++) {
        struct conn *c = s->conns[i];
        if (c->state == C_VIEWER && !c->closing &&
            (trace_mirror_pending(&c->tx, m) || !c->status_sent ||
             status_differs(&c->sent, &s->status) || c->breaks_sent != s->breaks_rev + 1))
            return false;
    }
    return true;
}

/* ---- answering ------------------------------------------------------------------------------ */

static void welcome(struct tui_server *s, struct conn *c)
{
    struct tui_source_status st;
    s->src->ops->status(s->src, &st);
    struct trace_proto_welcome w = {
        .major = TRACE_PROTO_MAJOR,
        .minor = TRACE_PROTO_MINOR,
        .pid = (uint64_t)getpid(),
        .state = (uint8_t)run_state(st.mode),
        .now = st.now,
        .events = st.events_done,
        .viewers = tui_server_viewers(s),
    };
    double ghz = trace_model_clock_ghz(s->src->ops->model(s->src));
    w.now_ns = ghz > 0 ? (double)st.now / ghz : 0;
    copy_text(w.run_id, sizeof(w.run_id), s->run_id);
    copy_text(w.name, sizeof(w.name), s->name);
    copy_text(w.trace, sizeof(w.trace), s->trace_path);
    trace_proto_put_welcome(&c->out, &w);
}

static void on_hello(struct tui_server *s, struct conn *c, const struct trace_wire_frame *f)
{
    struct trace_proto_hello h;
    struct diag d;
    if (f->type != TRACE_MSG_HELLO) {
        conn_error(c, -SIM_EPARSE, "expected HELLO first");
        return;
    }
    if (trace_proto_get_hello(f->body, f->len, &h, &d) < 0) {
        conn_error(c, -SIM_EPARSE, d.msg);
        return;
    }
    c->state = h.role == TRACE_ROLE_VIEWER  ? C_VIEWER
               : h.role == TRACE_ROLE_QUERY ? C_QUERY
                                            : C_CONTROL;
    welcome(s, c);
    if (c->state == C_QUERY)
        c->closing = true; /* ps has what it came for */
    if (c->state == C_VIEWER) {
        take_status(s); /* everyone sees the new count */
        push(s, c, true);
    }
}

static void answer_mem_list(struct tui_server *s, struct conn *c, uint64_t id, uint64_t space)
{
    struct tui_memview *mem = s->src->ops->memory ? s->src->ops->memory(s->src) : NULL;
    struct trace_proto_memlist l = {.id = id, .space = space};
    if (mem) {
        l.gen = mem->ops->generation(mem);
        size_t ns = mem->ops->space_count(mem);
        l.nspaces = ns < TRACE_PROTO_MAX_SPACES ? ns : TRACE_PROTO_MAX_SPACES;
        for (size_t i = 0; i < l.nspaces; i++) {
            copy_text(l.spaces[i].name, sizeof(l.spaces[i].name), mem->ops->space_name(mem, i));
            l.spaces[i].len = mem->ops->space_len(mem, i);
        }
        size_t n = 0;
        const struct tui_mem_entry *e =
            space < l.nspaces ? mem->ops->entries(mem, space, &n) : NULL;
        l.entries = sim_xcalloc(n ? n : 1, sizeof(*l.entries));
        for (size_t i = 0; i < n; i++) {
            struct trace_proto_mem_entry *x = &l.entries[i];
            x->addr = e[i].addr;
            x->dtype = (uint8_t)e[i].dtype;
            x->ndim = (uint8_t)(e[i].ndim <= SIM_MAX_DIMS ? e[i].ndim : SIM_MAX_DIMS);
            memcpy(x->shape, e[i].shape, sizeof(x->shape));
            x->nbytes = e[i].nbytes;
            copy_text(x->writer, sizeof(x->writer), e[i].writer);
            x->t_ns = e[i].t_ns;
            copy_text(x->pattern, sizeof(x->pattern), e[i].pattern);
        }
        l.n = n;
    }
    trace_proto_put_memlist(&c->out, &l, MEMLIST_BUDGET);
    free(l.entries);
}

static void answer_mem_read(struct tui_server *s, struct conn *c,
                            const struct trace_proto_request *q)
{
    struct tui_memview *mem = s->src->ops->memory ? s->src->ops->memory(s->src) : NULL;
    struct trace_proto_memread r = {
        .id = q->id, .space = q->arg[0], .addr = q->arg[1], .off = q->arg[2]};
    uint8_t *buf = sim_xmalloc(q->arg[3] ? q->arg[3] : 1);
    r.gone = !mem || mem->ops->read(mem, (size_t)q->arg[0], q->arg[1], q->arg[2], (size_t)q->arg[3],
                                    buf) <= 0;
    r.gen = mem ? mem->ops->generation(mem) : 0;
    r.data = buf;
    r.len = r.gone ? 0 : (size_t)q->arg[3];
    trace_proto_put_memread(&c->out, &r);
    free(buf);
}

/* Stop the run: the trace written, everyone told. */
static int stop_run(struct tui_server *s, char *msg, size_t size)
{
    struct diag d;
    diag_clear(&d);
    int rc = tui_source_live_finish(s->src, &d);
    char line[700];
    if (rc < 0)
        snprintf(msg, size, "stopped; the trace could not be written: %s",
                 diag_format(&d, line, sizeof(line)));
    else if (s->trace_path)
        snprintf(msg, size, "stopped; trace written to %s", s->trace_path);
    else
        snprintf(msg, size, "stopped (no trace file: the run had no -o)");
    s->end = TUI_SERVE_STOPPED;
    return rc;
}

static void on_request(struct tui_server *s, struct conn *c, const struct trace_wire_frame *f)
{
    if (f->type == TRACE_MSG_BYE) {
        c->closing = true;
        return;
    }
    struct trace_proto_request q;
    struct diag d;
    diag_clear(&d);
    if (f->type != TRACE_MSG_REQUEST) {
        char msg[96];
        snprintf(msg, sizeof(msg), "unexpected %s message", trace_proto_msg_name(f->type));
        conn_error(c, -SIM_EPARSE, msg);
        return;
    }
    if (trace_proto_get_request(f->body, f->len, &q, &d) < 0) {
        conn_error(c, -SIM_EPARSE, d.msg);
        return;
    }
    struct tui_source *src = s->src;
    const struct trace_model *m = src->ops->model(src);
    enum tui_control ctl;
    int rc = 0;
    char msg[SIM_DIAG_MSG_MAX] = "";
    switch (q.code) {
    case TRACE_REQ_DETAILS: {
        if (q.arg[0] >= trace_model_event_count(m)) {
            rc = diag_set(&d, SIM_EINVAL, NULL, 0, 0, NULL, "no event %llu",
                          (unsigned long long)q.arg[0]);
            break;
        }
        struct sim_value *det = trace_model_event_details(m, q.arg[0]);
        trace_proto_put_details(&c->out, q.id, q.arg[0], trace_model_transfer_count(m), det);
        sim_value_free(det);
        return;
    }
    case TRACE_REQ_MEM_LIST: answer_mem_list(s, c, q.id, q.arg[0]); return;
    case TRACE_REQ_MEM_READ: answer_mem_read(s, c, &q); return;
    case TRACE_REQ_RUN_UNTIL: rc = src->ops->run_until(src, q.arg[0], &d); break;
    case TRACE_REQ_BREAK_ADD:
        if (src->ops->break_count(src) >= TRACE_PROTO_MAX_BREAKS)
            rc = diag_set(&d, SIM_ELIMIT, NULL, 0, 0, NULL, "%d breakpoints at most",
                          TRACE_PROTO_MAX_BREAKS);
        else
            rc = src->ops->break_add(src, (enum tui_break_kind)q.kind, q.text, &d);
        break;
    case TRACE_REQ_BREAK_REMOVE:
        if (q.arg[0] >= src->ops->break_count(src))
            rc = diag_set(&d, SIM_EINVAL, NULL, 0, 0, NULL, "no breakpoint %llu",
                          (unsigned long long)q.arg[0] + 1);
        else
            src->ops->break_remove(src, (size_t)q.arg[0]);
        break;
    case TRACE_REQ_STOP: rc = stop_run(s, msg, sizeof(msg)); break;
    case TRACE_REQ_STEP_LINE:
        rc = src->ops->step_line ? src->ops->step_line(src, q.text, &d)
                                 : diag_set(&d, SIM_ESTATE, NULL, 0, 0, NULL, "no stepping here");
        break;
    default:
        if (tui_serve_control_of(q.code, &ctl))
            rc = src->ops->control(src, ctl, &d);
        else
            rc = diag_set(&d, SIM_ESTATE, NULL, 0, 0, NULL,
                          "request %llu is unknown to this run (npuscope %s): use the same "
                          "version to attach",
                          (unsigned long long)q.code, NPUSCOPE_VERSION);
        break;
    }
    if (rc < 0 && !msg[0]) {
        char line[700];
        copy_text(msg, sizeof(msg), diag_format(&d, line, sizeof(line)));
    }
    /* the answer comes after what the control changed */
    take_status(s);
    if (c->state == C_VIEWER)
        push(s, c, true);
    trace_proto_put_result(&c->out, q.id, rc < 0 ? rc : 0, msg);
}

/* ---- the loop ------------------------------------------------------------------------------- */

static void accept_all(struct tui_server *s)
{
    for (;;) {
        int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        struct conn *c = sim_xcalloc(1, sizeof(*c));
        c->fd = fd;
        c->since_ns = tui_now_ns();
        trace_wire_in_init(&c->in, TRACE_PROTO_MAX_TO_RUN);
        uid_t uid;
        char msg[300], who[96], owner[96];
        if (s->nconns == MAX_CONNS) {
            snprintf(msg, sizeof(msg), "refused: %d connections at once at most", MAX_CONNS);
            conn_error(c, -SIM_ELIMIT, msg);
            conn_free(c); /* no room to keep it until its message is sent */
            continue;
        }
        if (tui_runsock_peer_uid(fd, &uid) < 0 || uid != getuid()) {
            if (tui_runsock_peer_uid(fd, &uid) == 0)
                tui_runsock_user_name(uid, who, sizeof(who));
            else
                snprintf(who, sizeof(who), "an unknown user");
            tui_runsock_user_name(getuid(), owner, sizeof(owner));
            snprintf(msg, sizeof(msg),
                     "refused: run %s belongs to %s; only that user may attach to it", s->run_id,
                     owner);
            fprintf(stderr, "npuscope: refused a connection from %s: the run belongs to %s\n", who,
                    owner);
            fflush(stderr);
            conn_error(c, -SIM_ESTATE, msg);
        }
        s->conns[s->nconns++] = c;
    }
}

/* True when a connection has frames waiting and room for their answers. */
static bool has_work(const struct conn *c)
{
    return !c->closing && c->out.len < OUT_SOFT && trace_wire_in_ready(&c->in);
}

/* Carry out the frames a connection sent while its output has room. What does not fit
 * waits in its input buffer, which is not read meanwhile: a flood of requests costs the
 * run one read of them, OUT_SOFT and one answer, however many were sent. False when the
 * connection is to be closed now. */
static bool serve_frames(struct tui_server *s, struct conn *c)
{
    struct trace_wire_frame f;
    const char *why = NULL;
    while (s->end == TUI_SERVE_RUNNING && has_work(c)) {
        int rc = trace_wire_in_next(&c->in, &f, &why);
        if (rc < 0) {
            conn_error(c, -SIM_EPARSE, why);
            break;
        }
        if (c->state == C_NEW)
            on_hello(s, c, &f);
        else
            on_request(s, c, &f);
    }
    return c->out.len <= OUT_HARD && flush(c);
}

/* Read what a connection sent and carry it out. False when it is to be closed now. */
static bool serve_input(struct tui_server *s, struct conn *c)
{
    size_t room;
    uint8_t *p = trace_wire_in_room(&c->in, &room);
    ssize_t n = recv(c->fd, p, room, MSG_DONTWAIT);
    if (n == 0)
        return false; /* the viewer left */
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    trace_wire_in_added(&c->in, (size_t)n);
    return serve_frames(s, c);
}

static void drop(struct tui_server *s, size_t i)
{
    bool viewer = s->conns[i]->state == C_VIEWER;
    conn_free(s->conns[i]);
    s->conns[i] = s->conns[--s->nconns];
    if (viewer)
        s->last_push = 0; /* the others see the count at once */
}

int tui_server_step(struct tui_server *s, int timeout_ms)
{
    if (s->end)
        return 0;
    struct tui_source *src = s->src;
    bool running = src->ops->running(src);
    if (running) {
        struct diag d;
        diag_clear(&d);
        src->ops->tick(src, TICK_NS, &d);
    }
    uint64_t now = tui_now_ns();
    if (now - s->last_push >= FRAME_NS) {
        push_all(s);
        s->last_push = now;
    }
    running = src->ops->running(src);
    struct tui_source_status st;
    src->ops->status(src, &st);
    if (st.mode == TUI_MODE_FINISHED && !s->linger && !tui_server_viewers(s) && all_pushed(s)) {
        s->end = TUI_SERVE_DONE;
        return 0;
    }

    /* how long to wait: not at all while events run (unless paced), until the next frame
     * while a viewer has updates to come, until the oldest silent connection's time */
    int wait = -1;
    if (running)
        wait = src->ops->wait_ms ? src->ops->wait_ms(src) : 0;
    uint64_t t = tui_now_ns();
    uint64_t frame_left = t - s->last_push >= FRAME_NS ? 0 : FRAME_NS - (t - s->last_push);
    if (!all_pushed(s) || (tui_server_viewers(s) && running)) {
        int ms = (int)(frame_left / 1000000) + 1;
        wait = wait < 0 || ms < wait ? ms : wait;
    }
    struct pollfd fds[MAX_CONNS + 2];
    nfds_t nf = 0;
    fds[nf++] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
    fds[nf++] = (struct pollfd){.fd = sig_pipe[0], .events = POLLIN};
    for (size_t i = 0; i < s->nconns; i++) {
        struct conn *c = s->conns[i];
        short ev = 0;
        if (!c->closing && c->out.len < OUT_SOFT && !trace_wire_in_ready(&c->in))
            ev |= POLLIN; /* read more only once what was read is carried out */
        if (has_work(c))
            wait = 0;
        if (c->out.len)
            ev |= POLLOUT;
        fds[nf++] = (struct pollfd){.fd = c->fd, .events = ev};
        if (c->state == C_NEW) {
            uint64_t age = t - c->since_ns;
            int ms = age >= HELLO_NS ? 0 : (int)((HELLO_NS - age) / 1000000) + 1;
            wait = wait < 0 || ms < wait ? ms : wait;
        }
    }
    if (timeout_ms >= 0 && (wait < 0 || timeout_ms < wait))
        wait = timeout_ms;
    int rc = poll(fds, nf, wait);
    if (rc < 0 && errno != EINTR)
        return 1;
    if (rc > 0 && (fds[1].revents & POLLIN)) {
        char buf[16];
        while (read(sig_pipe[0], buf, sizeof(buf)) > 0)
            ;
    }
    if (sig_got) {
        s->signo = sig_got;
        sig_got = 0;
        s->end = TUI_SERVE_SIGNALLED;
        return 0;
    }
    /* connections first (their indexes match fds), then new ones */
    t = tui_now_ns();
    for (size_t k = s->nconns; k-- > 0;) {
        struct conn *c = s->conns[k];
        short re = rc > 0 ? fds[2 + k].revents : 0;
        bool keep = true;
        if (re & POLLIN)
            keep = serve_input(s, c);
        else if (re & (POLLHUP | POLLERR | POLLNVAL))
            keep = false;
        if (keep && (re & POLLOUT))
            keep = flush(c);
        if (keep && has_work(c)) /* requests that waited for their answers' room */
            keep = serve_frames(s, c);
        if (keep && c->state == C_NEW && !c->closing && t - c->since_ns >= HELLO_NS)
            conn_error(c, -SIM_EPARSE, "no HELLO in time");
        if (keep && c->closing && !c->out.len)
            keep = false;
        if (!keep)
            drop(s, k);
        if (s->end)
            return 0;
    }
    if (rc > 0 && (fds[0].revents & POLLIN))
        accept_all(s);
    return s->end ? 0 : 1;
}

enum tui_serve_end tui_server_run(struct tui_server *s, int *signo)
{
    static const int handled[2] = {SIGINT, SIGTERM};
    static const int ignored[2] = {SIGHUP, SIGPIPE};
    struct sigaction old_h[2], old_i[2], sa;
    bool piped = pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) == 0;
    if (!piped)
        sig_pipe[0] = sig_pipe[1] = -1;
    sig_got = 0;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 2; i++)
        sigaction(handled[i], &sa, &old_h[i]);
    sa.sa_handler = SIG_IGN;
    for (int i = 0; i < 2; i++)
        sigaction(ignored[i], &sa, &old_i[i]);
    while (tui_server_step(s, -1))
        ;
    for (int i = 0; i < 2; i++) {
        sigaction(handled[i], &old_h[i], NULL);
        sigaction(ignored[i], &old_i[i], NULL);
    }
    if (piped)
        for (int i = 0; i < 2; i++)
            close(sig_pipe[i]), sig_pipe[i] = -1;
    if (signo)
        *signo = s->signo;
    return s->end;
}

enum tui_serve_end tui_server_end(const struct tui_server *s)
{
    return s->end;
}

const char *tui_server_path(const struct tui_server *s)
{
    return s->path;
}

/* ---- life ------------------------------------------------------------------------------------ */

int tui_server_new(struct tui_source *src, const struct tui_serve_opts *o, struct tui_server **out,
                   struct diag *d)
{
    char path[TUI_RUNSOCK_PATH_MAX];
    int rc = 0;
    bool own_path = o->path != NULL;
    if (own_path) {
        if (strlen(o->path) >= sizeof(path))
            return diag_set(d, SIM_ELIMIT, NULL, 0, 0, NULL,
                            "--listen: a socket path must be shorter than %zu bytes", sizeof(path));
        snprintf(path, sizeof(path), "%s", o->path);
    } else {
        rc = tui_runsock_default_path(o->run_id, path, sizeof(path), d);
        if (rc < 0)
            return rc;
    }
    struct tui_server *s = sim_xcalloc(1, sizeof(*s));
    s->src = src;
    s->lfd = -1;
    s->linger = o->linger;
    s->focus = UINT64_MAX;
    rc = tui_runsock_listen(path, &s->lfd, &s->bound, d);
    if (rc < 0) {
        free(s);
        return rc;
    }
    s->path = sim_xstrdup(path);
    s->run_id = sim_xstrdup(o->run_id);
    s->name = sim_xstrdup(o->name ? o->name : "");
    s->trace_path = o->trace_path ? sim_xstrdup(o->trace_path) : NULL;
    if (own_path && tui_runsock_register(s->run_id, s->path, NULL) == 0)
        s->registered = true; /* ps finds it (without it, attach PATH still does) */
    if (s->trace_path) {
        struct diag nd;
        if (tui_runsock_note_write(s->trace_path, s->run_id, s->path, &nd) == 0)
            s->noted = true;
    }
    take_status(s);
    *out = s;
    return 0;
}

void tui_server_free(struct tui_server *s, const char *reason)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nconns; i++) {
        struct conn *c = s->conns[i];
        if (c->state != C_NEW || !c->closing)
            trace_proto_put_goodbye(&c->out, reason ? reason : "the run has ended");
        flush(c);
        conn_free(c);
    }
    if (s->lfd >= 0)
        close(s->lfd);
    tui_runsock_unlink(s->path, &s->bound);
    if (s->registered)
        tui_runsock_unregister(s->run_id);
    if (s->noted)
        tui_runsock_note_remove(s->trace_path, s->run_id);
    for (size_t i = 0; i < s->nbreaks; i++)
        free(s->breaks[i]);
    free(s->breaks);
    free(s->path);
    free(s->run_id);
    free(s->name);
    free(s->trace_path);
    free(s);
}
