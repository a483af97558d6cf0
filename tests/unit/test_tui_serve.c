/*
 * A served run and its viewers, without a terminal: the run serves in a child process
 * (tui_server_run), viewers are remote sources (tui/source/source_remote.c) or raw sockets in the
 * test. A viewer that steps sees exactly the steps, and its model is the model an
 * identical run in this process builds (runs are deterministic); a viewer that attaches
 * after the end gets the whole model; two viewers are counted; the memory pane's list
 * and a tensor's bytes arrive on demand, an op's details too; stop writes the trace.
 * Hostile clients (garbage, a huge declared length, a future version, a frame cut short,
 * no hello) get an ERROR and a closed connection while the run and its other viewers go
 * on; a hostile run is refused by the viewer the same way. The socket: a stale one is
 * replaced, a live one, a symbolic link or a plain file are refused. A viewer that floods
 * requests and reads nothing costs the run a bounded amount of memory.
 */
#include "sim/host/run.h"
#include "trace/live/live.h"
#include "trace/file/loader.h"
#include "trace/wire/mirror.h"
#include "trace/wire/proto.h"
#include "tui/source/memview.h"
#include "tui/source/runsock.h"
#include "tui/source/serve.h"
#include "tui/source/source.h"
#include "tui/term/view.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define SPEC "vector_add:pes=2,n=4096"

static char dir[256];
static char sock[300];
static pid_t server = -1;

static void setup(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/npuscope-serve.XXXXXX", t && *t ? t : P_tmpdir);
    cr_assert_not_null(mkdtemp(dir));
    snprintf(sock, sizeof(sock), "%s/r.sock", dir);
    signal(SIGPIPE, SIG_IGN);
}

static void teardown(void)
{
    if (server > 0) {
        kill(server, SIGTERM);
        waitpid(server, NULL, 0);
        server = -1;
    }
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(serve, .init = setup, .fini = teardown);

static struct tui_source *open_live(const char *spec, const char *trace, bool paused)
{
    struct sim_run_opts ro = {.kernel_spec = spec};
    struct sim_run *r;
    struct diag d;
    cr_assert_eq(sim_run_new(&ro, &r, &d), 0, "%s", d.msg);
    struct trace_live_opts lo = {.trace_path = trace,
                                 .timestamp = 1764498765,
                                 .model_name = "vector_add",
                                 .prefill_tokens = -1,
                                 .decode_tokens = -1};
    struct trace_live *l;
    cr_assert_eq(trace_live_new(sim_run_chip(r), &lo, &l, &d), 0, "%s", d.msg);
    struct tui_live_opts o = {.name = spec, .paused = paused};
    return tui_source_live_take(r, l, &o);
}

/* Serve spec in a child process; returns once its socket answers. */
static void serve_child(const char *spec, const char *trace, bool paused)
{
    server = fork();
    cr_assert_geq(server, 0);
    if (server == 0) {
        struct tui_source *src = open_live(spec, trace, paused);
        struct tui_serve_opts so = {
            .path = sock, .run_id = "test-run", .name = spec, .trace_path = trace, .linger = true};
        struct tui_server *s;
        struct diag d;
        if (tui_server_new(src, &so, &s, &d) < 0) {
            fprintf(stderr, "%s\n", d.msg);
            _exit(3);
        }
        int signo;
        enum tui_serve_end end = tui_server_run(s, &signo);
        tui_server_free(s, end == TUI_SERVE_STOPPED ? "the run was stopped" : "bye");
        tui_source_live_finish(src, &d);
        tui_source_free(src);
        _exit(end == TUI_SERVE_STOPPED ? 0 : 10 + (int)end);
    }
    for (int i = 0; i < 500; i++) {
        struct stat st;
        if (lstat(sock, &st) == 0)
            return;
        usleep(10000);
    }
    cr_assert_fail("the served run never listened");
}

static struct tui_source *attach(void)
{
    struct diag d;
    diag_clear(&d);
    struct tui_source *s = tui_source_remote_open(sock, &d);
    cr_assert_not_null(s, "%s", d.msg);
    return s;
}

static struct tui_source_status status(struct tui_source *s)
{
    struct tui_source_status st;
    s->ops->status(s, &st);
    return st;
}

/* Take in what the run sends until cond holds (or 10 s). */
#define UNTIL(s, cond)                                                                             \
    do {                                                                                           \
        uint64_t t0_ = tui_now_ns();                                                               \
        while (!(cond)) {                                                                          \
            cr_assert_lt(tui_now_ns() - t0_, 10000000000ull, "timed out waiting for " #cond);      \
            if ((s)->ops->running(s))                                                              \
                (s)->ops->tick((s), 10000000, NULL);                                               \
            else                                                                                   \
                usleep(2000);                                                                      \
        }                                                                                          \
    } while (0)

static void control(struct tui_source *s, enum tui_control c)
{
    struct diag d;
    diag_clear(&d);
    cr_assert_eq(s->ops->control(s, c, &d), 0, "%s", d.msg);
}

/* The same run, in this process, to its end. */
static struct tui_source *reference(void)
{
    struct tui_source *ref = open_live(SPEC, NULL, false);
    while (ref->ops->running(ref))
        ref->ops->tick(ref, 100000000, NULL);
    return ref;
}

static void assert_same_events(const struct trace_model *a, const struct trace_model *b)
{
    cr_assert_eq(trace_model_event_count(a), trace_model_event_count(b));
    cr_assert_eq(trace_model_track_count(a), trace_model_track_count(b));
    for (uint64_t i = 0; i < trace_model_event_count(a); i++) {
        const struct trace_event *x = trace_model_event(a, i), *y = trace_model_event(b, i);
        cr_assert(x->start == y->start && x->end == y->end && x->op_kind == y->op_kind);
        cr_assert_str_eq(trace_model_str(a, x->op), trace_model_str(b, y->op));
        cr_assert_str_eq(trace_model_str(a, trace_model_track_get(a, x->track)->name),
                         trace_model_str(b, trace_model_track_get(b, y->track)->name));
    }
    cr_assert_eq(trace_model_now(a), trace_model_now(b));
}

Test(serve, a_viewer_steps_pauses_and_sees_the_run_as_it_is)
{
    serve_child(SPEC, NULL, true);
    struct tui_source *v = attach();
    UNTIL(v, status(v).mode == TUI_MODE_PAUSED);
    cr_assert_eq(status(v).events_done, 0);
    cr_assert_eq(status(v).viewers, 1);
    for (int i = 0; i < 5; i++)
        control(v, TUI_CTL_STEP);
    cr_assert_eq(status(v).events_done, 5, "the answer comes after the step's state");
    cr_assert(status(v).last_event && strstr(status(v).last_event, "ev 5 at"));
    /* a second viewer: both counted, the same state */
    struct tui_source *w = attach();
    UNTIL(w, status(w).events_done == 5 && status(w).viewers == 2);
    UNTIL(v, status(v).viewers == 2);
    /* step to the next op: both see the op in flight */
    control(w, TUI_CTL_STEP_OP);
    UNTIL(w, status(w).mode == TUI_MODE_PAUSED && trace_model_event_count(w->ops->model(w)) > 0);
    UNTIL(v,
          trace_model_event_count(v->ops->model(v)) == trace_model_event_count(w->ops->model(w)));
    /* the first viewer leaves: the run goes on for the other */
    tui_source_free(v);
    UNTIL(w, status(w).viewers == 1);
    control(w, TUI_CTL_CONTINUE);
    UNTIL(w, status(w).mode == TUI_MODE_FINISHED);
    UNTIL(w, !w->ops->running(w) && trace_model_now(w->ops->model(w)) == (uint64_t)status(w).now);
    struct tui_source *ref = reference();
    assert_same_events(ref->ops->model(ref), w->ops->model(w));
    struct diag d;
    cr_assert_lt(w->ops->control(w, TUI_CTL_STEP, &d), 0);
    cr_assert(strstr(d.msg, "the simulation has finished"), "%s", d.msg);
    tui_source_free(ref);
    tui_source_free(w);
}

/* Whether the model holds event ev's details (they are returned as a copy). */
static bool has_details(const struct trace_model *m, uint64_t ev)
{
    struct sim_value *d = trace_model_event_details(m, ev);
    sim_value_free(d);
    return d != NULL;
}

Test(serve, a_late_viewer_gets_the_history_then_details_and_memory_on_demand)
{
    serve_child(SPEC, NULL, false);
    /* the run is under way or over before anyone looks */
    usleep(300000);
    struct tui_source *v = attach();
    UNTIL(v, status(v).mode == TUI_MODE_FINISHED && !v->ops->running(v));
    struct tui_source *ref = reference();
    assert_same_events(ref->ops->model(ref), v->ops->model(v));
    const struct trace_model *m = v->ops->model(v);
    /* details of an op: fetched, then in the model */
    cr_assert_null(trace_model_event_details(m, 0));
    v->ops->want_details(v, 0);
    UNTIL(v, has_details(m, 0));
    struct sim_value *a = trace_model_event_details(m, 0);
    struct sim_value *b = trace_model_event_details(ref->ops->model(ref), 0);
    cr_assert(sim_value_equal(a, b));
    sim_value_free(a);
    sim_value_free(b);
    /* memory: the spaces and a tensor list, then the bytes of one */
    struct tui_memview *mem = v->ops->memory(v);
    mem->ops->space_count(mem);
    UNTIL(v, mem->ops->space_count(mem) > 0);
    size_t n = 0;
    const struct tui_mem_entry *e = mem->ops->entries(mem, 0, &n);
    UNTIL(v, (e = mem->ops->entries(mem, 0, &n)) && n > 0);
    struct tui_memview *lm = ref->ops->memory(ref);
    size_t ln;
    const struct tui_mem_entry *le = lm->ops->entries(lm, 0, &ln);
    cr_assert_eq(n, ln);
    cr_assert_eq(e[0].addr, le[0].addr);
    cr_assert_eq(e[0].nbytes, le[0].nbytes);
    uint8_t want[16], got[16];
    cr_assert_eq(lm->ops->read(lm, 0, le[0].addr, 0, 16, want), 1);
    int rc = mem->ops->read(mem, 0, e[0].addr, 0, 16, got);
    cr_assert_eq(rc, 0, "not here yet: asked for");
    UNTIL(v, mem->ops->read(mem, 0, e[0].addr, 0, 16, got) == 1);
    cr_assert(memcmp(want, got, 16) == 0);
    cr_assert_eq(mem->ops->read(mem, 0, 0xdead000, 0, 4, got), -1, "no such tensor");
    tui_source_free(ref);
    tui_source_free(v);
}

Test(serve, breakpoints_and_run_until_travel_to_the_run)
{
    serve_child(SPEC, NULL, true);
    struct tui_source *v = attach();
    UNTIL(v, status(v).mode == TUI_MODE_PAUSED);
    struct diag d;
    cr_assert_eq(v->ops->break_add(v, TUI_BREAK_OP, "dma_*", &d), 0, "%s", d.msg);
    cr_assert_eq(v->ops->break_count(v), 1);
    char what[200];
    v->ops->break_describe(v, 0, what, sizeof(what));
    cr_assert(strstr(what, "op dma_* starts"), "%s", what);
    cr_assert_lt(v->ops->break_add(v, TUI_BREAK_OP, "  ", &d), 0);
    cr_assert(strstr(d.msg, "needs a pattern"), "%s", d.msg);
    control(v, TUI_CTL_CONTINUE);
    UNTIL(v, status(v).mode == TUI_MODE_PAUSED);
    uint64_t focus = v->ops->take_focus(v);
    UNTIL(v, (focus = focus != UINT64_MAX ? focus : v->ops->take_focus(v)) != UINT64_MAX);
    const struct trace_model *m = v->ops->model(v);
    cr_assert(strncmp(trace_model_str(m, trace_model_event(m, focus)->op), "dma_", 4) == 0);
    v->ops->break_remove(v, 0);
    cr_assert_eq(v->ops->break_count(v), 0);
    uint64_t now = status(v).now;
    cr_assert_eq(v->ops->run_until(v, now + 2000, &d), 0, "%s", d.msg);
    UNTIL(v, status(v).mode == TUI_MODE_PAUSED && status(v).now > now);
    cr_assert_leq(status(v).now, now + 2000);
    cr_assert_lt(v->ops->run_until(v, 0, &d), 0, "not ahead of now");
    tui_source_free(v);
}

Test(serve, a_metric_breakpoint_set_by_a_viewer_pauses_the_run_and_says_why)
{
    serve_child(SPEC, NULL, true);
    struct tui_source *v = attach();
    UNTIL(v, status(v).mode == TUI_MODE_PAUSED);
    struct diag d;
    cr_assert_eq(v->ops->break_add(v, TUI_BREAK_METRIC, "op.duration > 1", &d), 0, "%s", d.msg);
    cr_assert_eq(v->ops->break_count(v), 1);
    cr_assert_lt(v->ops->break_add(v, TUI_BREAK_METRIC, "no.such > 1", &d), 0);
    cr_assert_eq(v->ops->break_count(v), 1, "refused, the connection goes on");
    control(v, TUI_CTL_CONTINUE);
    UNTIL(v, status(v).mode == TUI_MODE_PAUSED && status(v).fired);
    cr_assert(strstr(status(v).fired, "op.duration"), "%s", status(v).fired);
    tui_source_free(v);
}

Test(serve, stop_writes_the_trace_and_ends_the_run)
{
    char trace[320];
    snprintf(trace, sizeof(trace), "%s/t.json", dir);
    serve_child(SPEC, trace, true);
    struct tui_source *v = attach();
    UNTIL(v, status(v).mode == TUI_MODE_PAUSED);
    control(v, TUI_CTL_STEP_OP);
    /* the note beside the trace names the run and its socket */
    char note[400], text[600] = "";
    snprintf(note, sizeof(note), "%s/.npuscope-run", dir);
    FILE *f = fopen(note, "r");
    cr_assert_not_null(f);
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    cr_assert(strstr(text, "run_id test-run\n") && strstr(text, sock), "%s", text);
    /* stop through a second connection, as npuscope stop does */
    int fd;
    struct diag d;
    cr_assert_eq(tui_runsock_connect(sock, &fd, &d), 0, "%s", d.msg);
    struct trace_wire_buf b = {0};
    struct trace_proto_hello h = {TRACE_PROTO_MAJOR, TRACE_PROTO_MINOR, TRACE_ROLE_CONTROL};
    trace_proto_put_hello(&b, &h);
    struct trace_proto_request q = {.id = 1, .code = TRACE_REQ_STOP};
    trace_proto_put_request(&b, &q);
    cr_assert_eq(write(fd, b.p, b.len), (ssize_t)b.len);
    trace_wire_buf_fini(&b);
    int st;
    cr_assert_eq(waitpid(server, &st, 0), server);
    server = -1;
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
    close(fd);
    /* the trace: written, marked incomplete; the socket and the note gone */
    struct trace_model *m;
    cr_assert_eq(trace_load_file(trace, NULL, &m, &d), 0, "%s", d.msg);
    cr_assert(sim_value_get_bool(trace_model_metadata(m), "incomplete", false));
    trace_model_free(m);
    struct stat sb;
    cr_assert_neq(lstat(sock, &sb), 0);
    cr_assert_neq(lstat(note, &sb), 0);
    /* the viewer hears why */
    UNTIL(v, status(v).mode == TUI_MODE_POSTMORTEM);
    cr_assert(strstr(status(v).notice, "stopped"), "%s", status(v).notice);
    cr_assert_lt(v->ops->control(v, TUI_CTL_STEP, &d), 0);
    tui_source_free(v);
}

/* The WELCOME of a query: the run's state now. */
static struct trace_proto_welcome query(void)
{
    int fd;
    struct diag d;
    cr_assert_eq(tui_runsock_connect(sock, &fd, &d), 0, "%s", d.msg);
    struct trace_wire_buf b = {0};
    struct trace_proto_hello h = {TRACE_PROTO_MAJOR, TRACE_PROTO_MINOR, TRACE_ROLE_QUERY};
    trace_proto_put_hello(&b, &h);
    cr_assert_eq(write(fd, b.p, b.len), (ssize_t)b.len);
    trace_wire_buf_fini(&b);
    struct trace_wire_in in;
    trace_wire_in_init(&in, TRACE_PROTO_MAX_TO_VIEWER);
    struct trace_proto_welcome w = {0};
    for (bool got = false; !got;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        cr_assert_gt(poll(&p, 1, 10000), 0);
        size_t room;
        uint8_t *buf = trace_wire_in_room(&in, &room);
        ssize_t k = read(fd, buf, room);
        cr_assert_gt(k, 0);
        trace_wire_in_added(&in, (size_t)k);
        struct trace_wire_frame f;
        const char *why;
        if (trace_wire_in_next(&in, &f, &why) == 1) {
            cr_assert_eq(f.type, TRACE_MSG_WELCOME);
            cr_assert_eq(trace_proto_get_welcome(f.body, f.len, &w, &d), 0, "%s", d.msg);
            got = true;
        }
    }
    trace_wire_in_fini(&in);
    close(fd);
    return w;
}

Test(serve, a_viewer_that_does_not_read_never_stalls_the_run)
{
    serve_child("llm_decode:layers=2,gen=8", NULL, false);
    /* a viewer that says hello, then reads nothing while the run goes on */
    int fd;
    struct diag d;
    cr_assert_eq(tui_runsock_connect(sock, &fd, &d), 0, "%s", d.msg);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    struct trace_wire_buf b = {0};
    struct trace_proto_hello h = {TRACE_PROTO_MAJOR, TRACE_PROTO_MINOR, TRACE_ROLE_VIEWER};
    trace_proto_put_hello(&b, &h);
    cr_assert_eq(write(fd, b.p, b.len), (ssize_t)b.len);
    trace_wire_buf_fini(&b);
    uint64_t t0 = tui_now_ns();
    struct trace_proto_welcome w;
    do {
        cr_assert_lt(tui_now_ns() - t0, 60000000000ull, "the run never finished");
        usleep(50000);
        w = query();
    } while (w.state != TRACE_RUN_FINISHED);
    cr_assert_eq(w.viewers, 1, "the silent viewer is still attached");
    /* when it reads at last, it catches up: the whole model, consistent */
    struct trace_model *m = trace_model_new();
    struct trace_wire_in in;
    trace_wire_in_init(&in, TRACE_PROTO_MAX_TO_VIEWER);
    struct tui_source *ref = open_live("llm_decode:layers=2,gen=8", NULL, false);
    while (ref->ops->running(ref))
        ref->ops->tick(ref, 100000000, NULL);
    uint64_t want = trace_model_event_count(ref->ops->model(ref));
    bool finished = false;
    while (trace_model_event_count(m) < want || !finished) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        cr_assert_gt(poll(&p, 1, 10000), 0, "%llu of %llu events",
                     (unsigned long long)trace_model_event_count(m), (unsigned long long)want);
        size_t room;
        uint8_t *buf = trace_wire_in_room(&in, &room);
        ssize_t k = read(fd, buf, room);
        cr_assert_gt(k, 0);
        trace_wire_in_added(&in, (size_t)k);
        struct trace_wire_frame f;
        const char *why;
        while (trace_wire_in_next(&in, &f, &why) == 1) {
            if (f.type == TRACE_MSG_MODEL)
                cr_assert_eq(trace_mirror_apply(m, f.body, f.len, &d), 0, "%s", d.msg);
            struct trace_proto_status st;
            if (f.type == TRACE_MSG_STATUS) {
                cr_assert_eq(trace_proto_get_status(f.body, f.len, &st, &d), 0, "%s", d.msg);
                finished = st.state == TRACE_RUN_FINISHED;
            }
        }
    }
    assert_same_events(ref->ops->model(ref), m);
    trace_wire_in_fini(&in);
    trace_model_free(m);
    tui_source_free(ref);
    close(fd);
}

/* The peak resident memory of a process, KiB (VmHWM). */
static long peak_kib(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    long kib = -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
            break;
    fclose(f);
    cr_assert_gt(kib, 0);
    return kib;
}

Test(serve, a_viewer_that_floods_requests_and_never_reads_costs_the_run_bounded_memory)
{
    serve_child("vector_add:pes=2,n=65536", NULL, false);
    /* a tensor of 256 KiB to ask for, found as the memory pane finds it */
    struct tui_source *v = attach();
    UNTIL(v, status(v).mode == TUI_MODE_FINISHED);
    struct tui_memview *mem = v->ops->memory(v);
    size_t n = 0;
    const struct tui_mem_entry *e = NULL;
    UNTIL(v, mem->ops->space_count(mem) > 0 && (e = mem->ops->entries(mem, 0, &n)) && n > 0);
    size_t big = 0;
    for (size_t i = 0; i < n; i++)
        big = e[i].nbytes > e[big].nbytes ? i : big;
    cr_assert_geq(e[big].nbytes, 64 * 1024);
    uint64_t addr = e[big].addr;
    long before = peak_kib(server);
    /* a viewer that asks for 64 KiB again and again and reads none of it: answered in
     * full, the requests it sends before it blocks would take hundreds of MiB */
    int fd;
    struct diag d;
    cr_assert_eq(tui_runsock_connect(sock, &fd, &d), 0, "%s", d.msg);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    struct trace_wire_buf b = {0};
    struct trace_proto_hello h = {TRACE_PROTO_MAJOR, TRACE_PROTO_MINOR, TRACE_ROLE_VIEWER};
    trace_proto_put_hello(&b, &h);
    size_t nreq = 0;
    for (uint64_t id = 1; b.len < 256 * 1024; id++, nreq++) {
        struct trace_proto_request q = {
            .id = id, .code = TRACE_REQ_MEM_READ, .arg = {0, addr, 0, 64 * 1024}};
        trace_proto_put_request(&b, &q);
    }
    size_t per_request = b.len / nreq, sent = 0, off = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        if (poll(&p, 1, 2000) <= 0)
            break; /* the run has stopped reading: flow control */
        ssize_t k = send(fd, b.p + off, b.len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (k < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        cr_assert_gt(k, 0, "the run dropped a viewer that only asked: %s", strerror(errno));
        sent += (size_t)k;
        off = (off + (size_t)k) % b.len; /* the same requests again (ids repeat: no matter) */
        cr_assert_lt(sent, 64u * 1024 * 1024, "the run never stopped reading the requests");
    }
    trace_wire_buf_fini(&b);
    cr_assert_gt(sent / per_request, 1000, "only %zu bytes of requests sent", sent);
    /* the run goes on: it answers others, and its memory grew by a few buffers at most */
    struct trace_proto_welcome w = query();
    cr_assert_eq(w.state, TRACE_RUN_FINISHED);
    long after = peak_kib(server);
    cr_assert_lt(after - before, 16 * 1024, "the run's peak memory grew from %ld to %ld KiB",
                 before, after);
    close(fd);
    tui_source_free(v);
}

/* ---- hostile peers ------------------------------------------------------------------------- */

/* Connect, send bytes, read until the run closes the connection: the frames it sent. */
static int hostile(const void *bytes, size_t n, uint8_t *type, char *msg, size_t size)
{
    int fd;
    struct diag d;
    cr_assert_eq(tui_runsock_connect(sock, &fd, &d), 0, "%s", d.msg);
    if (n)
        cr_assert_eq(write(fd, bytes, n), (ssize_t)n);
    struct trace_wire_in in;
    trace_wire_in_init(&in, TRACE_PROTO_MAX_TO_VIEWER);
    int frames = 0;
    *type = 0;
    msg[0] = '\0';
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        cr_assert_gt(poll(&p, 1, 10000), 0, "the run neither answered nor closed");
        size_t room;
        uint8_t *buf = trace_wire_in_room(&in, &room);
        ssize_t k = read(fd, buf, room);
        if (k <= 0)
            break; /* closed */
        trace_wire_in_added(&in, (size_t)k);
        struct trace_wire_frame f;
        const char *why;
        while (trace_wire_in_next(&in, &f, &why) == 1) {
            frames++;
            *type = f.type;
            int code;
            if (f.type == TRACE_MSG_ERROR)
                trace_proto_get_error(f.body, f.len, &code, msg, size, &d);
        }
    }
    trace_wire_in_fini(&in);
    close(fd);
    return frames;
}

Test(serve, hostile_clients_get_an_error_and_the_run_goes_on)
{
    serve_child(SPEC, NULL, true);
    struct tui_source *v = attach();
    UNTIL(v, status(v).mode == TUI_MODE_PAUSED);
    uint8_t type;
    char msg[600];

    static const char garbage[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    hostile(garbage, sizeof(garbage) - 1, &type, msg, sizeof(msg));
    cr_assert_eq(type, TRACE_MSG_ERROR);
    cr_assert(strstr(msg, "longer than the limit") || strstr(msg, "HELLO"), "%s", msg);

    static const uint8_t huge[] = {0xFF, 0xFF, 0xFF, 0x7F, TRACE_MSG_HELLO};
    hostile(huge, sizeof(huge), &type, msg, sizeof(msg));
    cr_assert_eq(type, TRACE_MSG_ERROR);
    cr_assert(strstr(msg, "longer than the limit"), "%s", msg);

    struct trace_wire_buf b = {0};
    struct trace_proto_hello h = {TRACE_PROTO_MAJOR + 1, 0, TRACE_ROLE_VIEWER};
    trace_proto_put_hello(&b, &h);
    hostile(b.p, b.len, &type, msg, sizeof(msg));
    cr_assert_eq(type, TRACE_MSG_ERROR);
    cr_assert(strstr(msg, "protocol version 3.0 is not this run's"), "%s", msg);

    /* a request before HELLO */
    b.len = 0;
    struct trace_proto_request q = {.id = 1, .code = TRACE_REQ_STOP};
    trace_proto_put_request(&b, &q);
    hostile(b.p, b.len, &type, msg, sizeof(msg));
    cr_assert_eq(type, TRACE_MSG_ERROR);
    cr_assert(strstr(msg, "expected HELLO first"), "%s", msg);

    /* a HELLO then a REQUEST cut short, then the connection closes: no harm */
    b.len = 0;
    h.major = TRACE_PROTO_MAJOR;
    h.role = TRACE_ROLE_CONTROL;
    trace_proto_put_hello(&b, &h);
    trace_proto_put_request(&b, &q);
    int fd;
    struct diag d;
    cr_assert_eq(tui_runsock_connect(sock, &fd, &d), 0, "%s", d.msg);
    cr_assert_eq(write(fd, b.p, b.len - 2), (ssize_t)(b.len - 2));
    close(fd);

    /* a well-formed REQUEST with a malformed body */
    b.len = 0;
    trace_proto_put_hello(&b, &h);
    size_t st = trace_wire_frame_begin(&b, TRACE_MSG_REQUEST);
    trace_wire_put_uv(&b, 2);
    trace_wire_put_uv(&b, TRACE_REQ_BREAK_ADD);
    trace_wire_put_u8(&b, 9); /* no such kind */
    trace_wire_frame_end(&b, st);
    hostile(b.p, b.len, &type, msg, sizeof(msg));
    cr_assert_eq(type, TRACE_MSG_ERROR);

    /* a request of a later version: answered, the connection stays */
    b.len = 0;
    trace_proto_put_hello(&b, &h);
    q = (struct trace_proto_request){.id = 3, .code = 4242};
    trace_proto_put_request(&b, &q);
    cr_assert_eq(tui_runsock_connect(sock, &fd, &d), 0, "%s", d.msg);
    cr_assert_eq(write(fd, b.p, b.len), (ssize_t)b.len);
    struct trace_wire_in in;
    trace_wire_in_init(&in, TRACE_PROTO_MAX_TO_VIEWER);
    struct trace_proto_result res = {0};
    bool answered = false;
    while (!answered) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        cr_assert_gt(poll(&p, 1, 10000), 0);
        size_t room;
        uint8_t *buf = trace_wire_in_room(&in, &room);
        ssize_t k = read(fd, buf, room);
        cr_assert_gt(k, 0, "the connection stays open");
        trace_wire_in_added(&in, (size_t)k);
        struct trace_wire_frame f;
        const char *why;
        while (trace_wire_in_next(&in, &f, &why) == 1)
            if (f.type == TRACE_MSG_RESULT) {
                cr_assert_eq(trace_proto_get_result(f.body, f.len, &res, &d), 0);
                answered = true;
            }
    }
    cr_assert(res.id == 3 && res.rc == -SIM_ESTATE);
    cr_assert(strstr(res.msg, "request 4242 is unknown"), "%s", res.msg);
    trace_wire_in_fini(&in);
    close(fd);
    trace_wire_buf_fini(&b);

    /* the run and its viewer are fine */
    control(v, TUI_CTL_STEP);
    cr_assert_eq(status(v).events_done, 1);
    cr_assert_eq(status(v).viewers, 1);
    tui_source_free(v);
}

/* A fake run: listens at sock, answers the first connection with bytes, then closes. */
static void fake_run(const void *bytes, size_t n)
{
    int lfd;
    struct tui_runsock_bound bound;
    struct diag d;
    cr_assert_eq(tui_runsock_listen(sock, &lfd, &bound, &d), 0, "%s", d.msg);
    server = fork();
    cr_assert_geq(server, 0);
    if (server == 0) {
        struct pollfd p = {.fd = lfd, .events = POLLIN};
        poll(&p, 1, 10000);
        int fd = accept(lfd, NULL, NULL);
        char buf[256];
        ssize_t r = read(fd, buf, sizeof(buf)); /* the HELLO */
        (void)r;
        r = write(fd, bytes, n);
        (void)r;
        usleep(100000);
        _exit(0);
    }
    close(lfd);
}

Test(serve, a_viewer_refuses_a_hostile_run)
{
    static const uint8_t garbage[] = {0xFF, 0xFF, 0xFF, 0xFF, 0x81, 1, 2, 3};
    fake_run(garbage, sizeof(garbage));
    struct diag d;
    diag_clear(&d);
    cr_assert_null(tui_source_remote_open(sock, &d));
    cr_assert(strstr(d.msg, "broken"), "%s", d.msg);
    waitpid(server, NULL, 0);
    server = -1;
    unlink(sock);

    /* a WELCOME from the future */
    struct trace_wire_buf b = {0};
    struct trace_proto_welcome w = {.major = TRACE_PROTO_MAJOR + 1};
    trace_proto_put_welcome(&b, &w);
    fake_run(b.p, b.len);
    cr_assert_null(tui_source_remote_open(sock, &d));
    cr_assert(strstr(d.msg, "the run speaks protocol version 3.0"), "%s", d.msg);
    waitpid(server, NULL, 0);
    server = -1;
    unlink(sock);

    /* a good WELCOME, then a model message that lies: the viewer detaches, keeps going */
    b.len = 0;
    w.major = TRACE_PROTO_MAJOR;
    trace_proto_put_welcome(&b, &w);
    size_t st = trace_wire_frame_begin(&b, TRACE_MSG_MODEL);
    trace_wire_put_u8(&b, 4); /* ends */
    trace_wire_put_raw(&b, "\x02\0\0\0\x05\x01", 6);
    trace_wire_frame_end(&b, st);
    st = trace_wire_frame_begin(&b, TRACE_MSG_STATUS);
    trace_wire_put_u8(&b, 77); /* no such state */
    trace_wire_frame_end(&b, st);
    fake_run(b.p, b.len);
    struct tui_source *v = tui_source_remote_open(sock, &d);
    cr_assert_not_null(v, "%s", d.msg);
    UNTIL(v, status(v).mode == TUI_MODE_POSTMORTEM);
    cr_assert(strstr(status(v).notice, "broken message"), "%s", status(v).notice);
    cr_assert_eq(trace_model_event_count(v->ops->model(v)), 0);
    tui_source_free(v);
    trace_wire_buf_fini(&b);
}

/* ---- the socket ---------------------------------------------------------------------------- */

Test(serve, a_stale_socket_is_replaced_a_link_or_a_live_run_refused)
{
    struct diag d;
    int fd, fd2;
    struct tui_runsock_bound bound;
    /* a stale socket: bound, then its process gone (nobody listens) */
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    cr_assert_lt(strlen(sock), sizeof(a.sun_path));
    memcpy(a.sun_path, sock, strlen(sock) + 1);
    cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
    close(s);
    cr_assert_eq(tui_runsock_listen(sock, &fd, &bound, &d), 0, "%s", d.msg);
    struct stat st;
    cr_assert_eq(lstat(sock, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
    /* a live one is not taken over */
    cr_assert_lt(tui_runsock_listen(sock, &fd2, &bound, &d), 0);
    cr_assert(strstr(d.msg, "a run is already served at"), "%s", d.msg);
    close(fd);
    tui_runsock_unlink(sock, &bound);
    cr_assert_neq(lstat(sock, &st), 0);
    /* a symbolic link is never followed, a file never replaced */
    char target[320];
    snprintf(target, sizeof(target), "%s/target", dir);
    FILE *f = fopen(target, "w");
    fputs("precious", f);
    fclose(f);
    cr_assert_eq(symlink(target, sock), 0);
    cr_assert_lt(tui_runsock_listen(sock, &fd, &bound, &d), 0);
    cr_assert(strstr(d.msg, "is a symbolic link: not following it"), "%s", d.msg);
    cr_assert_eq(lstat(target, &st), 0);
    cr_assert_eq(st.st_size, 8);
    unlink(sock);
    cr_assert_lt(tui_runsock_listen(target, &fd, &bound, &d), 0);
    cr_assert(strstr(d.msg, "exists and is not a socket"), "%s", d.msg);
    /* connecting: nothing there, a stale socket */
    cr_assert_lt(tui_runsock_connect(sock, &fd, &d), 0);
    cr_assert(strstr(d.msg, "no run is served at"), "%s", d.msg);
    s = socket(AF_UNIX, SOCK_STREAM, 0);
    cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
    close(s);
    cr_assert_lt(tui_runsock_connect(sock, &fd, &d), 0);
    cr_assert(strstr(d.msg, "the run has ended"), "%s", d.msg);
}

Test(serve, the_runs_directory_is_private_and_checked)
{
    char old[512] = "";
    const char *x = getenv("XDG_RUNTIME_DIR");
    if (x)
        snprintf(old, sizeof(old), "%s", x);
    /* a runtime directory of our own: runs go under it, in a directory made 0700 */
    char rt[320], path[TUI_RUNSOCK_PATH_MAX], want[400];
    snprintf(rt, sizeof(rt), "%s/rt", dir);
    cr_assert_eq(mkdir(rt, 0700), 0);
    setenv("XDG_RUNTIME_DIR", rt, 1);
    struct diag d;
    cr_assert_eq(tui_runsock_default_path("r1", path, sizeof(path), &d), 0, "%s", d.msg);
    snprintf(want, sizeof(want), "%s/npuscope/r1.sock", rt);
    cr_assert_str_eq(path, want);
    struct stat st;
    snprintf(want, sizeof(want), "%s/npuscope", rt);
    cr_assert_eq(lstat(want, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0700);
    /* ours but opened to others: made private again */
    chmod(want, 0755);
    cr_assert_eq(tui_runsock_dir(path, sizeof(path), true, &d), 0, "%s", d.msg);
    cr_assert_eq(lstat(want, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0700);
    /* a symbolic link in its place is not used */
    cr_assert_eq(rmdir(want), 0);
    cr_assert_eq(symlink(dir, want), 0);
    cr_assert_lt(tui_runsock_dir(path, sizeof(path), true, &d), 0);
    cr_assert(strstr(d.msg, "is not a directory (a link or a file): not using it"), "%s", d.msg);
    /* another user's directory in its place is refused (root can make one to try) */
    cr_assert_eq(unlink(want), 0);
    if (getuid() == 0) {
        cr_assert_eq(mkdir(want, 0700), 0);
        cr_assert_eq(chown(want, 65534, 65534), 0);
        cr_assert_lt(tui_runsock_default_path("r2", path, sizeof(path), &d), 0);
        cr_assert(strstr(d.msg, "belongs to") && strstr(d.msg, "uid 65534") &&
                      strstr(d.msg, "not to you: not using it"),
                  "%s", d.msg);
        cr_assert_eq(rmdir(want), 0);
    }
    /* a runtime directory open to others is not used: TMPDIR/npuscope-UID instead, or
     * /tmp without an absolute TMPDIR */
    chmod(rt, 0755);
    char oldtmp[512] = "";
    const char *t = getenv("TMPDIR");
    if (t)
        snprintf(oldtmp, sizeof(oldtmp), "%s", t);
    setenv("TMPDIR", dir, 1);
    tui_runsock_dir(path, sizeof(path), false, &d);
    snprintf(want, sizeof(want), "%s/npuscope-%u", dir, (unsigned)getuid());
    cr_assert_str_eq(path, want);
    setenv("TMPDIR", "relative", 1);
    tui_runsock_dir(path, sizeof(path), false, &d);
    snprintf(want, sizeof(want), "/tmp/npuscope-%u", (unsigned)getuid());
    cr_assert_str_eq(path, want);
    if (oldtmp[0])
        setenv("TMPDIR", oldtmp, 1);
    else
        unsetenv("TMPDIR");
    if (old[0])
        setenv("XDG_RUNTIME_DIR", old, 1);
    else
        unsetenv("XDG_RUNTIME_DIR");
}
