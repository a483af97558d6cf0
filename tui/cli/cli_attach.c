/*
 * npuscope attach, ps and stop: the commands of served runs (tui/source/serve.h). attach opens
 * the usual live TUI on a run's socket (tui/source/source_remote.c): leaving it, whichever way,
 * never stops the run. ps asks every run in the user's runs' directory for its state;
 * stop asks one run to end, and returns once its trace is written.
 */
#include "tui/cli/cli.h"

#include "sim/util/escape.h"
#include "sim/util/xalloc.h"
#include "trace/wire/proto.h"
#include "tui/app/app.h"
#include "tui/source/runsock.h"
#include "tui/source/source.h"
#include "tui/term/term.h"
#include "tui/term/theme.h"
#include "tui/term/view.h"

#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum {
    QUERY_MS = 3000,  /* a run answers ps within this */
    STOP_MS = 300000, /* and stop (its trace written) within this */
};

static int fail(const char *cmd, const struct diag *d)
{
    char line[SIM_DIAG_FILE_MAX + SIM_DIAG_PATH_MAX + SIM_DIAG_MSG_MAX + 64];
    diag_format(d, line, sizeof(line));
    fprintf(stderr, "npuscope %s: %s\n", cmd, line);
    return CLI_EXIT_USAGE;
}

int cli_attach(const char *what, const char *theme)
{
    setlocale(LC_ALL, "");
    bool unicode = tui_term_unicode();
    struct diag d;
    diag_clear(&d);
    char *user_dir = tui_theme_user_dir();
    int status = CLI_EXIT_USAGE;
    struct tui_source *src = NULL;
    struct tui_term *term = NULL;
    char path[TUI_RUNSOCK_PATH_MAX + 8];
    if (cli_theme_check("attach", theme, user_dir) != 0)
        goto out;
    /* the run's answer first (it may refuse), then the terminal */
    if (tui_runsock_resolve(what, path, sizeof(path), &d) < 0) {
        status = fail("attach", &d);
        goto out;
    }
    src = tui_source_remote_open(path, &d);
    if (!src || tui_term_check(&d) < 0) {
        status = fail("attach", &d);
        goto out;
    }
    if (tui_term_open(&term, &d) < 0) {
        status = fail("attach", &d);
        goto out;
    }
    int w, h;
    tui_term_size(term, &w, &h);
    struct tui_app *app = tui_app_new(src, w, h, unicode, theme, user_dir, NULL, &d);
    status = tui_app_run(app, term);
    tui_term_close(term);
    tui_app_free(app);
out:
    tui_source_free(src); /* says goodbye: the run goes on */
    free(user_dir);
    return status;
}

/* ---- ps and stop: a short conversation ------------------------------------------------- */

/* Wait for the next frame on fd into in (at most ms). 1 with *f, 0 on timeout or a closed
 * connection, -1 when the stream is broken (why). */
static int next_frame(int fd, struct trace_wire_in *in, int ms, struct trace_wire_frame *f,
                      const char **why)
{
    uint64_t t0 = tui_now_ns();
    for (;;) {
        int rc = trace_wire_in_next(in, f, why);
        if (rc != 0)
            return rc;
        int left = ms - (int)((tui_now_ns() - t0) / 1000000);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, left) <= 0)
            return 0;
        size_t room;
        uint8_t *buf = trace_wire_in_room(in, &room);
        ssize_t n = recv(fd, buf, room, 0);
        if (n <= 0)
            return 0;
        trace_wire_in_added(in, (size_t)n);
    }
}

static bool send_all(int fd, const struct trace_wire_buf *b)
{
    size_t done = 0;
    while (done < b->len) {
        ssize_t n = send(fd, b->p + done, b->len - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += (size_t)n;
    }
    return true;
}

/* Connect to path as role and read the WELCOME. Returns 0 with *fd and *w, or a negative
 * code with d filled. */
static int hello(const char *path, enum trace_role role, int *fd, struct trace_wire_in *in,
                 struct trace_proto_welcome *w, struct diag *d)
{
    int rc = tui_runsock_connect(path, fd, d);
    if (rc < 0)
        return rc;
    struct trace_wire_buf b = {0};
    struct trace_proto_hello h = {TRACE_PROTO_MAJOR, TRACE_PROTO_MINOR, (uint8_t)role};
    trace_proto_put_hello(&b, &h);
    bool sent = send_all(*fd, &b);
    trace_wire_buf_fini(&b);
    struct trace_wire_frame f;
    const char *why = "";
    rc = sent ? next_frame(*fd, in, QUERY_MS, &f, &why) : 0;
    if (rc <= 0) {
        close(*fd);
        return rc < 0 ? diag_set(d, SIM_EPARSE, NULL, 0, 0, NULL, "broken answer (%s)", why)
                      : diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL, "the run did not answer");
    }
    if (f.type == TRACE_MSG_ERROR) {
        char msg[SIM_DIAG_MSG_MAX], safe[SIM_DIAG_MSG_MAX];
        int code;
        close(*fd);
        if (trace_proto_get_error(f.body, f.len, &code, msg, sizeof(msg), d) < 0)
            return -SIM_EPARSE;
        sim_escape(msg, strlen(msg), safe, sizeof(safe));
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL, "the run refused: %s", safe);
    }
    if (f.type != TRACE_MSG_WELCOME || trace_proto_get_welcome(f.body, f.len, w, d) < 0) {
        close(*fd);
        if (f.type != TRACE_MSG_WELCOME)
            diag_set(d, SIM_EPARSE, NULL, 0, 0, NULL, "unexpected answer %s",
                     trace_proto_msg_name(f.type));
        return -SIM_EPARSE;
    }
    return 0;
}

static const char *state_name(uint8_t s)
{
    return s == TRACE_RUN_FINISHED ? "finished" : s == TRACE_RUN_PAUSED ? "paused" : "running";
}

int cli_ps(void)
{
    struct tui_runsock_run *runs;
    size_t n;
    tui_runsock_list(&runs, &n);
    if (!n) {
        printf("no served runs (npuscope run --headless --listen serves one)\n");
        free(runs);
        return CLI_EXIT_OK;
    }
    printf("%-34s %7s  %-24s %12s %12s  %-8s %7s\n", "RUN ID", "PID", "WORKLOAD", "SIM TIME",
           "EVENTS", "STATE", "VIEWERS");
    for (size_t i = 0; i < n; i++) {
        int fd;
        struct trace_wire_in in;
        trace_wire_in_init(&in, TRACE_PROTO_MAX_TO_VIEWER);
        struct trace_proto_welcome w = {0};
        struct diag d;
        char id[160], name[200];
        sim_escape(runs[i].run_id, strlen(runs[i].run_id), id, sizeof(id));
        if (hello(runs[i].path, TRACE_ROLE_QUERY, &fd, &in, &w, &d) < 0) {
            char line[700];
            printf("%-34s %7s  %s\n", id, "-", diag_format(&d, line, sizeof(line)));
        } else {
            close(fd);
            char t[32];
            tui_fmt_ns(t, sizeof(t), w.now_ns);
            sim_escape(w.name, strlen(w.name), name, sizeof(name));
            printf("%-34s %7llu  %-24s %12s %12llu  %-8s %7llu\n", id, (unsigned long long)w.pid,
                   name, t, (unsigned long long)w.events, state_name(w.state),
                   (unsigned long long)w.viewers);
        }
        trace_wire_in_fini(&in);
    }
    free(runs);
    return CLI_EXIT_OK;
}

int cli_stop(const char *what)
{
    char path[TUI_RUNSOCK_PATH_MAX + 8];
    struct diag d;
    diag_clear(&d);
    int fd;
    struct trace_wire_in in;
    trace_wire_in_init(&in, TRACE_PROTO_MAX_TO_VIEWER);
    struct trace_proto_welcome w = {0};
    if (tui_runsock_resolve(what, path, sizeof(path), &d) < 0 ||
        hello(path, TRACE_ROLE_CONTROL, &fd, &in, &w, &d) < 0) {
        trace_wire_in_fini(&in);
        return fail("stop", &d);
    }
    struct trace_wire_buf b = {0};
    struct trace_proto_request q = {.id = 1, .code = TRACE_REQ_STOP};
    trace_proto_put_request(&b, &q);
    bool sent = send_all(fd, &b);
    trace_wire_buf_fini(&b);
    int status = CLI_EXIT_FAIL;
    char id[160];
    sim_escape(w.run_id, strlen(w.run_id), id, sizeof(id));
    for (;;) {
        struct trace_wire_frame f;
        const char *why = "";
        int rc = sent ? next_frame(fd, &in, STOP_MS, &f, &why) : 0;
        if (rc <= 0) {
            fprintf(stderr, "npuscope stop: %s: %s\n", id,
                    rc < 0 ? "broken answer" : "the run did not answer");
            break;
        }
        struct trace_proto_result res;
        if (f.type != TRACE_MSG_RESULT)
            continue; /* a GOODBYE may come after it */
        if (trace_proto_get_result(f.body, f.len, &res, &d) < 0 || res.id != 1) {
            fprintf(stderr, "npuscope stop: %s: broken answer\n", id);
            break;
        }
        char msg[SIM_DIAG_MSG_MAX];
        sim_escape(res.msg, strlen(res.msg), msg, sizeof(msg));
        if (res.rc < 0) {
            fprintf(stderr, "npuscope stop: %s: %s\n", id, msg);
        } else {
            printf("npuscope stop: %s %s\n", id, msg);
            status = CLI_EXIT_OK;
        }
        break;
    }
    close(fd);
    trace_wire_in_fini(&in);
    return status;
}
