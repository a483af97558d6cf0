/*
 * Where served runs live and how to reach them safely: the per-user directory of their
 * sockets, listening (a socket only its user can open, a stale one replaced, a symbolic
 * link never followed), connecting (only to a run of the same user), the note a run
 * leaves beside its trace, and the list npuscope ps and attach look runs up in.
 *
 * The directory is $XDG_RUNTIME_DIR/npuscope when XDG_RUNTIME_DIR is the user's own
 * private directory, else $TMPDIR/npuscope-UID (/tmp without TMPDIR); either is created
 * 0700 and must be a real
 * directory owned by the user with no access for others, or it is not used. A run's
 * socket there is RUN_ID.sock; a run served at a path of its own (--listen=PATH) leaves
 * RUN_ID.link there, a line naming that path, so ps finds it too.
 */
#ifndef TUI_RUNSOCK_H
#define TUI_RUNSOCK_H

#include "sim/util/diag.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum {
    TUI_RUNSOCK_PATH_MAX = 108, /* sun_path: longest socket path + 1 */
};

/*
 * The directory of this user's served runs into buf (see above). create: make it when
 * missing. Returns 0, -SIM_ENOENT (not there, create false) or another negative code with
 * d saying why the directory cannot be used (another user's, a link, open to others).
 */
int tui_runsock_dir(char *buf, size_t size, bool create, struct diag *d);

/* The default socket of run_id: DIR/RUN_ID.sock (the directory created). */
int tui_runsock_default_path(const char *run_id, char *buf, size_t size, struct diag *d);

/* Which file a listening socket was bound to (to remove that one only). */
struct tui_runsock_bound {
    dev_t dev;
    ino_t ino;
};

/*
 * Listen on path: a Unix stream socket, non-blocking, mode 0600. What is at path already:
 * a socket nobody answers on (a run that crashed) is removed and replaced; a run that
 * answers, a symbolic link (never followed), another kind of file or another user's file
 * are refused. Returns 0 with *fd and *bound, or a negative code with d filled.
 */
int tui_runsock_listen(const char *path, int *fd, struct tui_runsock_bound *bound, struct diag *d);

/* Remove the socket at path if it is still the one bound (not a file put there since). */
void tui_runsock_unlink(const char *path, const struct tui_runsock_bound *bound);

/*
 * Connect to the run served at path (blocking) and check that it runs as this user.
 * Returns 0 with *fd, or a negative code with d saying why in words a user acts on
 * (nothing served there, the run is gone, permission denied, another user's run).
 */
int tui_runsock_connect(const char *path, int *fd, struct diag *d);

/* The user id of the peer of a connected Unix socket (SO_PEERCRED); -1 when unknown. */
int tui_runsock_peer_uid(int fd, uid_t *uid);

/* A user's name for messages ("root", "uid 1234"). */
void tui_runsock_user_name(uid_t uid, char *buf, size_t size);

/* A socket outside the directory: record it as DIR/RUN_ID.link (and remove the record). */
int tui_runsock_register(const char *run_id, const char *path, struct diag *d);
void tui_runsock_unregister(const char *run_id);

/*
 * The note beside a trace file: .npuscope-run in the trace's directory, naming the run,
 * its socket and its process (written atomically, never through a link). note_remove
 * removes it only while it still names run_id.
 */
int tui_runsock_note_write(const char *trace_path, const char *run_id, const char *sock,
                           struct diag *d);
void tui_runsock_note_remove(const char *trace_path, const char *run_id);

/* A served run found in the directory. */
struct tui_runsock_run {
    char run_id[128];
    char path[TUI_RUNSOCK_PATH_MAX];
};

/*
 * The runs in the directory: their sockets and registered paths, sorted by run id (*out
 * is a new array the caller frees). Sockets nobody answers on are left out and removed,
 * with their records. Returns 0 (no directory: no runs).
 */
int tui_runsock_list(struct tui_runsock_run **out, size_t *n);

/*
 * What npuscope attach and stop were given: a path (it holds a '/', or names a socket
 * that exists), a run id, or a unique part of one (its process id, say). NULL or "": the
 * only run there is. Fills path and returns 0, or a negative code with d filled (no such
 * run, several match: they are named).
 */
int tui_runsock_resolve(const char *what, char *path, size_t size, struct diag *d);

#endif
