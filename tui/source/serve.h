/*
 * A served run: a live source (tui/source/source.h, the same controller the in-process TUI
 * drives) run without a terminal, its model, state and memory offered to viewers on a
 * Unix socket (trace/wire/PROTOCOL.md). The server plays the TUI's part: it runs a time-boxed
 * batch of events while the simulation runs, carries out the viewers' controls between
 * two events, and at most ~30 times a second sends each viewer what changed. A viewer
 * whose socket does not drain is skipped until it does, then gets everything since in
 * one message: the simulation never waits for a viewer, and a viewer costs the server a
 * bounded amount of memory (two buffers and a few counters), however far behind it is.
 *
 * One event loop on poll(): the listening socket, the viewers, and a self-pipe for
 * SIGINT and SIGTERM (the handlers only write a byte; SIGHUP and SIGPIPE are ignored
 * while serving: a served run belongs to no terminal). Connections from another user are
 * refused (SO_PEERCRED) with a message to them and a line on stderr.
 */
#ifndef TUI_SERVE_H
#define TUI_SERVE_H

#include "sim/util/diag.h"
#include "tui/source/source.h"

#include <stdbool.h>
#include <stdint.h>

struct tui_server;

struct tui_serve_opts {
    const char *path;       /* the socket; NULL: the run's default (tui/source/runsock.h) */
    const char *run_id;     /* the run's id (copied) */
    const char *name;       /* the workload or kernel (copied) */
    const char *trace_path; /* the trace file, or NULL; its .npuscope-run note goes beside it */
    bool linger;            /* keep serving after the simulation finished, until stopped;
                               otherwise the server ends once it has finished and no viewer
                               is attached */
};

/* Why a server ended. */
enum tui_serve_end {
    TUI_SERVE_RUNNING = 0, /* not ended */
    TUI_SERVE_DONE,        /* the simulation finished and nobody watches */
    TUI_SERVE_STOPPED,     /* npuscope stop (the trace was written then) */
    TUI_SERVE_SIGNALLED,   /* SIGINT or SIGTERM */
};

/*
 * Serve src (a live source, borrowed: it must outlive the server): listen on the socket,
 * write the note and, for a socket outside the runs' directory, its record. Returns 0 with
 * *out, or a negative code with d filled (the socket cannot be made: a live run there, a
 * link, another user's file...).
 */
int tui_server_new(struct tui_source *src, const struct tui_serve_opts *o, struct tui_server **out,
                   struct diag *d);

/* The socket path (borrowed). */
const char *tui_server_path(const struct tui_server *s);

/*
 * One round of the loop: a batch of events when the simulation runs, updates to viewers
 * when a frame is due, then wait at most timeout_ms (-1: as long as there is nothing to
 * do) for the sockets and carry out what arrived. Returns 1 while serving, 0 once ended
 * (tui_server_end says why).
 */
int tui_server_step(struct tui_server *s, int timeout_ms);

/*
 * Serve until the end: SIGINT and SIGTERM end it (handled through a self-pipe), SIGHUP and
 * SIGPIPE are ignored meanwhile; the previous handlers come back at the end. Returns why
 * it ended; *signo receives the signal for TUI_SERVE_SIGNALLED.
 */
enum tui_serve_end tui_server_run(struct tui_server *s, int *signo);

enum tui_serve_end tui_server_end(const struct tui_server *s);

/* Viewers attached now. */
unsigned tui_server_viewers(const struct tui_server *s);

/* Tell every connection the run ends (why: reason), close them, remove the socket, its
 * record and the note, and free. NULL is a no-op. */
void tui_server_free(struct tui_server *s, const char *reason);

/* The protocol's request code of a control, and back (false: the code is no control). */
uint64_t tui_serve_req_of(enum tui_control c);
bool tui_serve_control_of(uint64_t req, enum tui_control *c);

#endif
