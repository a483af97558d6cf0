/*
 * Served runs' sockets (see runsock.h). Every file is looked at with lstat before it is
 * used, so a symbolic link is seen as one and never followed; the directory's checks
 * (a directory, the user's own, mode 0700) are what make the rest safe: nobody else can
 * put or swap files in it.
 */
#include "tui/source/runsock.h"

#include "sim/util/escape.h"
#include "sim/util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* ---- the directory ------------------------------------------------------------------------ */

/* A path for a message: escaped, shortened. */
static const char *shown(const char *path, char *buf, size_t size)
{
    sim_escape(path, strlen(path), buf, size);
    return buf;
}

void tui_runsock_user_name(uid_t uid, char *buf, size_t size)
{
    struct passwd pw, *res = NULL;
    char tmp[1024];
    if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) == 0 && res && res->pw_name)
        snprintf(buf, size, "%s (uid %u)", res->pw_name, (unsigned)uid);
    else
        snprintf(buf, size, "uid %u", (unsigned)uid);
}

/* Check (and with create, make) a private directory of this user. */
static int private_dir(const char *path, bool create, struct diag *d)
{
    char p[600];
    if (create && mkdir(path, 0700) != 0 && errno != EEXIST)
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "%s: cannot create the directory: %s",
                        shown(path, p, sizeof(p)), strerror(errno));
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return diag_set(d, SIM_ENOENT, NULL, 0, 0, NULL, "%s: no such directory",
                            shown(path, p, sizeof(p)));
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "%s: %s", shown(path, p, sizeof(p)),
                        strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                        "%s is not a directory (a link or a file): not using it",
                        shown(path, p, sizeof(p)));
    if (st.st_uid != getuid()) {
        char who[96];
        tui_runsock_user_name(st.st_uid, who, sizeof(who));
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                        "%s belongs to %s, not to you: not using it", shown(path, p, sizeof(p)),
                        who);
    }
    if ((st.st_mode & 077) && chmod(path, 0700) != 0)
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                        "%s is open to other users and cannot be made private: %s",
                        shown(path, p, sizeof(p)), strerror(errno));
    return 0;
}

/* XDG_RUNTIME_DIR when it is usable: absolute, a directory of this user, private. */
static const char *runtime_dir(void)
{
    const char *x = getenv("XDG_RUNTIME_DIR");
    struct stat st;
    if (!x || x[0] != '/' || lstat(x, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 077))
        return NULL;
    return x;
}

/* The candidate directories, the preferred first; returns how many. The fallback is under
 * TMPDIR when it is an absolute path, as other per-user sockets are (emacs, ssh-agent). */
static int candidates(char dirs[2][256])
{
    int n = 0;
    const char *x = runtime_dir();
    if (x && strlen(x) < 200)
        snprintf(dirs[n++], 256, "%s/npuscope", x);
    const char *t = getenv("TMPDIR");
    if (!t || t[0] != '/' || strlen(t) >= 200)
        t = "/tmp";
    size_t len = strlen(t);
    while (len > 1 && t[len - 1] == '/')
        len--;
    snprintf(dirs[n++], 256, "%.*s/npuscope-%u", (int)len, t, (unsigned)getuid());
    return n;
}

int tui_runsock_dir(char *buf, size_t size, bool create, struct diag *d)
{
    char dirs[2][256];
    candidates(dirs);
    if ((size_t)snprintf(buf, size, "%s", dirs[0]) >= size)
        return diag_set(d, SIM_ELIMIT, NULL, 0, 0, NULL, "the runs' directory path is too long");
    return private_dir(buf, create, d);
}

int tui_runsock_default_path(const char *run_id, char *buf, size_t size, struct diag *d)
{
    char dir[256];
    int rc = tui_runsock_dir(dir, sizeof(dir), true, d);
    if (rc < 0)
        return rc;
    size_t lim = size < TUI_RUNSOCK_PATH_MAX ? size : TUI_RUNSOCK_PATH_MAX;
    if ((size_t)snprintf(buf, lim, "%s/%s.sock", dir, run_id) >= lim)
        return diag_set(d, SIM_ELIMIT, NULL, 0, 0, NULL,
                        "the socket path of run %s is too long for a Unix socket", run_id);
    return 0;
}

/* ---- sockets ------------------------------------------------------------------------------ */

static int fill_addr(struct sockaddr_un *a, const char *path, struct diag *d)
{
    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof(a->sun_path)) {
        char p[600];
        return diag_set(d, SIM_ELIMIT, NULL, 0, 0, NULL,
                        "%s: a socket path must be 1 to %zu bytes long", shown(path, p, sizeof(p)),
                        sizeof(a->sun_path) - 1);
    }
    memcpy(a->sun_path, path, n + 1);
    return 0;
}

/* Does a run answer at path? 1 yes, 0 nobody listens (stale), -1 cannot tell (errno). */
static int answers(const char *path)
{
    struct sockaddr_un a;
    if (fill_addr(&a, path, NULL) < 0)
        return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int rc = connect(fd, (struct sockaddr *)&a, sizeof(a));
    int err = errno;
    close(fd);
    if (rc == 0)
        return 1;
    errno = err;
    return err == ECONNREFUSED ? 0 : -1;
}

int tui_runsock_listen(const char *path, int *out, struct tui_runsock_bound *bound, struct diag *d)
{
    char p[600];
    shown(path, p, sizeof(p));
    struct sockaddr_un a;
    int rc = fill_addr(&a, path, d);
    if (rc < 0)
        return rc;
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode))
            return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                            "%s is a symbolic link: not following it (remove it or listen "
                            "elsewhere)",
                            p);
        if (!S_ISSOCK(st.st_mode))
            return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                            "%s exists and is not a socket: not replacing it", p);
        if (st.st_uid != getuid()) {
            char who[96];
            tui_runsock_user_name(st.st_uid, who, sizeof(who));
            return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL, "%s belongs to %s: not replacing it",
                            p, who);
        }
        int live = answers(path);
        if (live > 0)
            return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                            "a run is already served at %s (npuscope ps lists the runs)", p);
        if (live < 0)
            return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "%s: %s", p, strerror(errno));
        if (unlink(path) != 0 && errno != ENOENT) /* a crashed run's: replaced */
            return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "%s: cannot remove the stale socket: %s",
                            p, strerror(errno));
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "socket: %s", strerror(errno));
    mode_t old = umask(0177); /* the socket is born 0600: no moment open to others */
    rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
    int err = errno;
    umask(old);
    if (rc != 0 || listen(fd, 16) != 0) {
        err = rc != 0 ? err : errno;
        close(fd);
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "%s: cannot listen: %s", p, strerror(err));
    }
    if (lstat(path, &st) != 0) {
        close(fd);
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "%s: %s", p, strerror(errno));
    }
    bound->dev = st.st_dev;
    bound->ino = st.st_ino;
    *out = fd;
    return 0;
}

void tui_runsock_unlink(const char *path, const struct tui_runsock_bound *bound)
{
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == bound->dev &&
        st.st_ino == bound->ino)
        unlink(path);
}

int tui_runsock_peer_uid(int fd, uid_t *uid)
{
    struct ucred cr;
    socklen_t len = sizeof(cr);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || len != sizeof(cr))
        return -1;
    *uid = cr.uid;
    return 0;
}

int tui_runsock_connect(const char *path, int *out, struct diag *d)
{
    char p[600];
    shown(path, p, sizeof(p));
    struct sockaddr_un a;
    int rc = fill_addr(&a, path, d);
    if (rc < 0)
        return rc;
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        int err = errno;
        close(fd);
        switch (err) {
        case ENOENT: return diag_set(d, SIM_ENOENT, NULL, 0, 0, NULL, "no run is served at %s", p);
        case ECONNREFUSED:
            return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                            "nothing answers at %s: the run has ended (a stale socket)", p);
        case EACCES:
        case EPERM:
            return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                            "%s: permission denied: a run is served to the user who started it "
                            "only",
                            p);
        default:
            return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "%s: cannot connect: %s", p,
                            strerror(err));
        }
    }
    uid_t peer;
    if (tui_runsock_peer_uid(fd, &peer) < 0 || peer != getuid()) {
        char who[96] = "an unknown user";
        if (tui_runsock_peer_uid(fd, &peer) == 0)
            tui_runsock_user_name(peer, who, sizeof(who));
        close(fd);
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                        "%s is served by %s, not by you: not attaching to it", p, who);
    }
    *out = fd;
    return 0;
}

/* ---- records and notes -------------------------------------------------------------------- */

/* Write text to path atomically: a new temporary file beside it (never through a link),
 * then rename over. */
static int write_atomic(const char *path, const char *text, mode_t mode, struct diag *d)
{
    char tmp[4200], p[600];
    shown(path, p, sizeof(p));
    if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid()) >= sizeof(tmp))
        return diag_set(d, SIM_ELIMIT, NULL, 0, 0, NULL, "%s: path too long", p);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "%s: cannot create: %s", p, strerror(errno));
    size_t n = strlen(text);
    bool ok = write(fd, text, n) == (ssize_t)n;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        int err = errno;
        unlink(tmp);
        return diag_set(d, SIM_EIO, NULL, 0, 0, NULL, "%s: cannot write: %s", p, strerror(err));
    }
    return 0;
}

/* The first line of a small regular file (not a link) into buf; false when there is none. */
static bool read_line(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return buf[0] != '\0';
}

static int link_path(const char *run_id, char *buf, size_t size, bool create, struct diag *d)
{
    char dir[256];
    int rc = tui_runsock_dir(dir, sizeof(dir), create, d);
    if (rc < 0)
        return rc;
    if ((size_t)snprintf(buf, size, "%s/%s.link", dir, run_id) >= size)
        return diag_set(d, SIM_ELIMIT, NULL, 0, 0, NULL, "run id too long");
    return 0;
}

int tui_runsock_register(const char *run_id, const char *path, struct diag *d)
{
    char lp[512], line[TUI_RUNSOCK_PATH_MAX + 2];
    int rc = link_path(run_id, lp, sizeof(lp), true, d);
    if (rc < 0)
        return rc;
    snprintf(line, sizeof(line), "%s\n", path);
    return write_atomic(lp, line, 0600, d);
}

void tui_runsock_unregister(const char *run_id)
{
    char lp[512];
    if (link_path(run_id, lp, sizeof(lp), false, NULL) == 0)
        unlink(lp);
}

static int note_path(const char *trace_path, char *buf, size_t size)
{
    const char *slash = strrchr(trace_path, '/');
    int n = slash ? snprintf(buf, size, "%.*s/.npuscope-run", (int)(slash - trace_path), trace_path)
                  : snprintf(buf, size, ".npuscope-run");
    return n > 0 && (size_t)n < size ? 0 : -1;
}

int tui_runsock_note_write(const char *trace_path, const char *run_id, const char *sock,
                           struct diag *d)
{
    char np[4200];
    if (note_path(trace_path, np, sizeof(np)) < 0)
        return diag_set(d, SIM_ELIMIT, NULL, 0, 0, NULL, "trace path too long");
    char text[1024];
    snprintf(text, sizeof(text),
             "run_id %s\nsocket %s\npid %ld\n"
             "# a run served to viewers: npuscope attach %s; npuscope stop %s ends it\n",
             run_id, sock, (long)getpid(), run_id, run_id);
    return write_atomic(np, text, 0644, d);
}

void tui_runsock_note_remove(const char *trace_path, const char *run_id)
{
    char np[4200], line[256], want[160];
    if (note_path(trace_path, np, sizeof(np)) < 0)
        return;
    snprintf(want, sizeof(want), "run_id %s", run_id);
    if (read_line(np, line, sizeof(line)) && strcmp(line, want) == 0)
        unlink(np);
}

/* ---- finding runs ------------------------------------------------------------------------- */

static int by_id(const void *a, const void *b)
{
    return strcmp(((const struct tui_runsock_run *)a)->run_id,
                  ((const struct tui_runsock_run *)b)->run_id);
}

static void scan_dir(const char *dir, struct tui_runsock_run **v, size_t *n, size_t *cap)
{
    DIR *dh = opendir(dir);
    if (!dh)
        return;
    struct dirent *e;
    while ((e = readdir(dh))) {
        const char *name = e->d_name;
        size_t len = strlen(name);
        bool sock = len > 5 && strcmp(name + len - 5, ".sock") == 0;
        bool link = len > 5 && strcmp(name + len - 5, ".link") == 0;
        if ((!sock && !link) || len - 5 >= sizeof((*v)->run_id))
            continue;
        char full[512], target[TUI_RUNSOCK_PATH_MAX + 8];
        if ((size_t)snprintf(full, sizeof(full), "%s/%s", dir, name) >= sizeof(full))
            continue;
        struct stat st;
        if (lstat(full, &st) != 0 || st.st_uid != getuid())
            continue;
        if (sock && !S_ISSOCK(st.st_mode))
            continue;
        if (sock) {
            if (strlen(full) >= sizeof(target))
                continue;
            memcpy(target, full, strlen(full) + 1);
        } else if (!S_ISREG(st.st_mode) || !read_line(full, target, sizeof(target))) {
            continue;
        }
        if (strlen(target) >= TUI_RUNSOCK_PATH_MAX)
            continue;
        if (answers(target) == 0) { /* a run that crashed: its leftovers go */
            if (sock || (lstat(target, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_uid == getuid()))
                unlink(target);
            if (link)
                unlink(full);
            continue;
        }
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 16;
            *v = sim_xreallocarray(*v, *cap, sizeof(**v));
        }
        struct tui_runsock_run *r = &(*v)[(*n)++];
        snprintf(r->run_id, sizeof(r->run_id), "%.*s", (int)(len - 5), name);
        memcpy(r->path, target, strlen(target) + 1); /* shorter than the field: checked */
    }
    closedir(dh);
}

int tui_runsock_list(struct tui_runsock_run **out, size_t *n)
{
    char dirs[2][256];
    int k = candidates(dirs);
    struct tui_runsock_run *v = NULL;
    size_t cap = 0;
    *n = 0;
    for (int i = 0; i < k; i++)
        if (private_dir(dirs[i], false, NULL) == 0)
            scan_dir(dirs[i], &v, n, &cap);
    if (*n)
        qsort(v, *n, sizeof(*v), by_id);
    *out = v;
    return 0;
}

int tui_runsock_resolve(const char *what, char *path, size_t size, struct diag *d)
{
    struct stat st;
    if (what && *what && (strchr(what, '/') || (lstat(what, &st) == 0 && S_ISSOCK(st.st_mode)))) {
        if ((size_t)snprintf(path, size, "%s", what) >= size)
            return diag_set(d, SIM_ELIMIT, NULL, 0, 0, NULL, "socket path too long");
        return 0;
    }
    struct tui_runsock_run *runs;
    size_t n;
    tui_runsock_list(&runs, &n);
    size_t hits = 0, hit = 0;
    for (size_t i = 0; i < n; i++) {
        if (what && *what && strcmp(runs[i].run_id, what) == 0) {
            hits = 1, hit = i;
            break;
        }
        if (!what || !*what || strstr(runs[i].run_id, what))
            hits++, hit = i;
    }
    int rc = 0;
    char q[300];
    shown(what ? what : "", q, sizeof(q));
    if (hits == 1) {
        snprintf(path, size, "%s", runs[hit].path);
    } else if (!hits) {
        rc = what && *what ? diag_set(d, SIM_ENOENT, NULL, 0, 0, NULL,
                                      "no served run named '%s' (npuscope ps lists them)", q)
                           : diag_set(d, SIM_ENOENT, NULL, 0, 0, NULL,
                                      "no served run to attach to (start one with npuscope run "
                                      "--headless --listen)");
    } else {
        char names[400] = "";
        size_t used = 0;
        for (size_t i = 0; i < n && used + 2 < sizeof(names); i++)
            if (!what || !*what || strstr(runs[i].run_id, what))
                used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s",
                                         used ? ", " : "", runs[i].run_id);
        rc = diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL, "%zu served runs match%s%s%s: name one (%s)",
                      hits, what && *what ? " '" : "", what && *what ? q : "",
                      what && *what ? "'" : "", names);
    }
    free(runs);
    return rc;
}
