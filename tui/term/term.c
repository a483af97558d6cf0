/*
 * The terminal layer over ncursesw. One terminal per process (the fatal hook and the
 * signal handlers reach it through a file-scope pointer). Signal handlers only store the
 * signal number and write a byte to a pipe that the input wait polls alongside the
 * keyboard.
 */
#include "tui/term/term.h"

#include "sim/util/mapguard.h"
#include "sim/util/xalloc.h"
#include "tui/term/keymap.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <langinfo.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <term.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

/* How each style is drawn. */
struct look {
    attr_t attr;
    short pair;
};

struct tui_term {
    SCREEN *screen;
    int ncolours;
    bool default_colours; /* use_default_colors worked: -1 is a colour */
    struct look looks[TUI_STYLE_COUNT];
    struct tui_cell *front; /* what is on screen */
    int fw, fh;
    bool invalid;
    struct sigaction old[3];
    struct sigaction old_crash[5];
};

/* The sanitizers report crashes themselves: leave those signals to them. */
#ifdef __SANITIZE_ADDRESS__
#define CRASH_HANDLERS 0
#else
#define CRASH_HANDLERS 1
#endif

static const int handled_signals[3] = {SIGINT, SIGTERM, SIGHUP};
static const int crash_signals[5] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

static struct tui_term *the_term;
static volatile sig_atomic_t got_signal;
static int signal_pipe[2] = {-1, -1};
/* For the crash path: what restores the screen, prepared in advance. */
static char crash_reset[256];
static size_t crash_reset_len;
static struct termios saved_tios;
static bool have_saved_tios;

static void on_signal(int signo)
{
    int saved = errno;
    got_signal = signo;
    if (signal_pipe[1] >= 0) {
        char b = 1;
        ssize_t r = write(signal_pipe[1], &b, 1);
        (void)r;
    }
    errno = saved;
}

void tui_term_crash_restore(void)
{
    if (!the_term)
        return;
    if (crash_reset_len) {
        ssize_t r = write(STDOUT_FILENO, crash_reset, crash_reset_len);
        (void)r;
    }
    if (have_saved_tios)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved_tios);
}

/* A crash: put the terminal back with async-signal-safe calls, then die as before. A SIGBUS
 * of a trace's mapping cut short on disk is no crash: its page reads as zeros from now on
 * (sim/util/mapguard.h), and the read goes on. */
static void on_crash(int signo, siginfo_t *si, void *uc)
{
    (void)uc;
    if (signo == SIGBUS && si && sim_mapguard_fault(si->si_addr))
        return;
    tui_term_crash_restore();
    signal(signo, SIG_DFL);
    raise(signo);
}

static void fatal_hook(void)
{
    if (the_term && !isendwin())
        endwin();
}

/* tigetstr's answer is a string (not NULL, not (char *)-1 for "not a string"). */
static bool have_cap(const char *s)
{
    return s && (intptr_t)s != -1;
}

static void add_seq(const char *s)
{
    size_t n = strlen(s);
    if (crash_reset_len + n + 1 < sizeof(crash_reset)) {
        memcpy(crash_reset + crash_reset_len, s, n + 1);
        crash_reset_len += n;
    }
}

static void add_cap(const char *name)
{
    const char *s = tigetstr(name);
    if (have_cap(s))
        add_seq(s);
}

/* Can this terminal run a full-screen UI? Checked before curses takes it over. */
int tui_term_check(struct diag *d)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                        "the viewer needs a terminal: standard input and output are not one");
    const char *term = getenv("TERM");
    if (!term || !*term)
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                        "TERM is not set: set it to your terminal's type (e.g. "
                        "TERM=xterm-256color)");
    int err = 0;
    if (setupterm(term, STDOUT_FILENO, &err) != OK) {
        if (err == 1)
            return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                            "TERM=%.64s is a hardcopy terminal: the viewer needs a screen", term);
        if (err == -1)
            return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                            "no terminfo database found for TERM=%.64s", term);
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                        "unknown terminal type TERM=%.64s (try TERM=xterm-256color)", term);
    }
    bool ok = have_cap(tigetstr("cup")) && tigetflag("hc") <= 0;
    if (ok) {
        crash_reset_len = 0;
        add_cap("rmcup");
        add_cap("sgr0");
        add_cap("cnorm");
        add_cap("rmkx");
        if (have_cap(tigetstr("kmous"))) /* xterm mouse reporting, which the UI turns on */
            add_seq("\033[?1006l\033[?1002l\033[?1000l");
    }
    del_curterm(cur_term);
    if (!ok)
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL,
                        "TERM=%.64s cannot move the cursor: the viewer needs a full-screen "
                        "terminal (try TERM=xterm or vt100)",
                        term);
    return 0;
}

static void install_signals(struct tui_term *t)
{
    if (pipe(signal_pipe) == 0) {
        for (int i = 0; i < 2; i++) {
            fcntl(signal_pipe[i], F_SETFL, fcntl(signal_pipe[i], F_GETFL) | O_NONBLOCK);
            fcntl(signal_pipe[i], F_SETFD, FD_CLOEXEC);
        }
    }
    got_signal = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++)
        sigaction(handled_signals[i], &sa, &t->old[i]);
    struct sigaction crash;
    memset(&crash, 0, sizeof(crash));
    crash.sa_sigaction = on_crash;
    sigemptyset(&crash.sa_mask);
    crash.sa_flags = SA_SIGINFO | SA_NODEFER;
    for (int i = 0; CRASH_HANDLERS && i < 5; i++)
        sigaction(crash_signals[i], &crash, &t->old_crash[i]);
}

static void restore_signals(struct tui_term *t)
{
    for (int i = 0; i < 3; i++)
        sigaction(handled_signals[i], &t->old[i], NULL);
    for (int i = 0; CRASH_HANDLERS && i < 5; i++)
        sigaction(crash_signals[i], &t->old_crash[i], NULL);
    for (int i = 0; i < 2; i++) {
        if (signal_pipe[i] >= 0)
            close(signal_pipe[i]);
        signal_pipe[i] = -1;
    }
}

int tui_term_open(struct tui_term **out, struct diag *d)
{
    *out = NULL;
    int rc = tui_term_check(d);
    if (rc < 0)
        return rc;
    have_saved_tios = tcgetattr(STDIN_FILENO, &saved_tios) == 0;
    struct tui_term *t = sim_xcalloc(1, sizeof(*t));
    t->screen = newterm(NULL, stdout, stdin);
    if (!t->screen) {
        free(t);
        return diag_set(d, SIM_ESTATE, NULL, 0, 0, NULL, "cannot start the terminal (TERM=%.64s)",
                        getenv("TERM"));
    }
    set_term(t->screen);
    the_term = t;
    sim_set_fatal_hook(fatal_hook);
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    meta(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    const char *no_color = getenv("NO_COLOR");
    if (has_colors() && !(no_color && *no_color)) {
        start_color();
        t->default_colours = use_default_colors() == OK;
        t->ncolours = COLORS >= 256 ? 256 : COLORS >= 16 ? 16 : COLORS >= 8 ? 8 : 0;
    }
    mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0);
    install_signals(t);
    struct tui_theme plain;
    tui_theme_init_plain(&plain);
    tui_term_set_theme(t, &plain);
    *out = t;
    return 0;
}

void tui_term_close(struct tui_term *t)
{
    if (!t)
        return;
    mousemask(0, NULL);
    curs_set(1);
    endwin();
    delscreen(t->screen);
    restore_signals(t);
    sim_set_fatal_hook(NULL);
    the_term = NULL;
    free(t->front);
    free(t);
}

void tui_term_ignore_hangups(struct tui_term *t)
{
    struct sigaction ign;
    memset(&ign, 0, sizeof(ign));
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    for (int i = 0; i < 3; i++)
        if (handled_signals[i] == SIGHUP)
            t->old[i] = ign; /* what tui_term_close puts back */
    sigaction(SIGHUP, &ign, NULL);
}

void tui_term_size(struct tui_term *t, int *w, int *h)
{
    (void)t;
    getmaxyx(stdscr, *h, *w);
}

bool tui_term_unicode(void)
{
    if (strcmp(nl_langinfo(CODESET), "UTF-8") != 0)
        return false;
    const char *term = getenv("TERM");
    if (!term)
        return true;
    static const char *const ascii_only[] = {"vt52", "vt100", "vt102", "vt220", "ansi", "dumb"};
    for (size_t i = 0; i < sizeof(ascii_only) / sizeof(ascii_only[0]); i++) {
        size_t n = strlen(ascii_only[i]);
        if (strncmp(term, ascii_only[i], n) == 0 && (term[n] == '\0' || term[n] == '-'))
            return false;
    }
    return true;
}

int tui_term_colours(const struct tui_term *t)
{
    return t->ncolours;
}

static attr_t attrs_of(unsigned a)
{
    attr_t r = A_NORMAL;
    if (a & TUI_ATTR_BOLD)
        r |= A_BOLD;
    if (a & TUI_ATTR_DIM)
        r |= A_DIM;
    if (a & TUI_ATTR_UNDERLINE)
        r |= A_UNDERLINE;
    if (a & TUI_ATTR_REVERSE)
        r |= A_REVERSE;
    if (a & TUI_ATTR_ITALIC)
        r |= A_ITALIC;
    if (a & TUI_ATTR_STANDOUT)
        r |= A_STANDOUT;
    return r;
}

void tui_term_set_theme(struct tui_term *t, const struct tui_theme *th)
{
    for (int s = 0; s < TUI_STYLE_COUNT; s++) {
        struct tui_theme_resolved r = tui_theme_resolve(th, (enum tui_style)s, t->ncolours);
        t->looks[s] = (struct look){attrs_of(r.attrs), 0};
        if (t->ncolours == 0 || s + 1 >= COLOR_PAIRS)
            continue;
        int fg = r.fg, bg = r.bg;
        if (!t->default_colours) { /* -1 means nothing to this terminal */
            fg = fg < 0 ? COLOR_WHITE : fg;
            bg = bg < 0 ? COLOR_BLACK : bg;
        }
        if (init_pair((short)(s + 1), (short)fg, (short)bg) == OK)
            t->looks[s].pair = (short)(s + 1);
    }
    t->invalid = true;
}

void tui_term_invalidate(struct tui_term *t)
{
    t->invalid = true;
    clearok(curscr, TRUE);
}

void tui_term_draw(struct tui_term *t, const struct tui_canvas *c)
{
    if (c->w != t->fw || c->h != t->fh) {
        free(t->front);
        t->front = sim_xcalloc((size_t)c->w * (size_t)c->h + 1, sizeof(*t->front));
        t->fw = c->w, t->fh = c->h;
        t->invalid = true;
        erase();
    }
    for (int y = 0; y < c->h; y++) {
        for (int x = 0; x < c->w; x++) {
            const struct tui_cell *cell = tui_canvas_cell(c, x, y);
            struct tui_cell *old = &t->front[(size_t)y * (size_t)c->w + (size_t)x];
            if (!t->invalid && old->cp == cell->cp && old->style == cell->style &&
                old->width == cell->width)
                continue;
            *old = *cell;
            if (cell->width == 0)
                continue; /* drawn with the first half */
            const struct look *lk = &t->looks[cell->style < TUI_STYLE_COUNT ? cell->style : 0];
            wchar_t wc[2] = {(wchar_t)cell->cp, 0};
            cchar_t cc;
            setcchar(&cc, wc, lk->attr, lk->pair, NULL);
            mvadd_wch(y, x, &cc);
            if (cell->width == 2 && x + 1 < c->w) /* the right half is now on screen too */
                t->front[(size_t)y * (size_t)c->w + (size_t)x + 1] = *tui_canvas_cell(c, x + 1, y);
        }
    }
    t->invalid = false;
    wnoutrefresh(stdscr);
    doupdate();
}

static int key_of_code(int code)
{
    switch (code) {
    case KEY_UP: return TUI_KEY_UP;
    case KEY_DOWN: return TUI_KEY_DOWN;
    case KEY_LEFT: return TUI_KEY_LEFT;
    case KEY_RIGHT: return TUI_KEY_RIGHT;
    case KEY_SLEFT: return TUI_KEY_SHIFT_LEFT;
    case KEY_SRIGHT: return TUI_KEY_SHIFT_RIGHT;
    case KEY_PPAGE: return TUI_KEY_PAGE_UP;
    case KEY_NPAGE: return TUI_KEY_PAGE_DOWN;
    case KEY_HOME: return TUI_KEY_HOME;
    case KEY_END: return TUI_KEY_END;
    case KEY_ENTER: return TUI_KEY_ENTER;
    case KEY_BACKSPACE: return TUI_KEY_BACKSPACE;
    case KEY_DC: return TUI_KEY_DELETE;
    case KEY_BTAB: return TUI_KEY_BACKTAB;
    case KEY_F(1): return TUI_KEY_F1;
    default: return -1;
    }
}

/* One input from curses without waiting; false when there is none. */
static bool read_input(struct tui_input *in)
{
    wint_t wch;
    timeout(0);
    int r = get_wch(&wch);
    if (r == ERR)
        return false;
    memset(in, 0, sizeof(*in));
    if (r == KEY_CODE_YES) {
        if (wch == KEY_RESIZE) {
            in->kind = TUI_IN_RESIZE;
            return true;
        }
        if (wch == KEY_MOUSE) {
            MEVENT ev;
            if (getmouse(&ev) != OK)
                return false;
            in->kind = TUI_IN_MOUSE;
            in->x = ev.x, in->y = ev.y;
            in->button = ev.bstate & BUTTON4_PRESSED ? 4 : ev.bstate & BUTTON5_PRESSED ? 5 : 1;
            return true;
        }
        int k = key_of_code((int)wch);
        if (k < 0)
            return false;
        in->kind = TUI_IN_KEY, in->key = k;
        return true;
    }
    in->kind = TUI_IN_KEY;
    switch (wch) {
    case '\r':
    case '\n': in->key = TUI_KEY_ENTER; break;
    case 0x7F:
    case 0x08: in->key = TUI_KEY_BACKSPACE; break;
    default: in->key = (int)wch; break;
    }
    return true;
}

void tui_term_wait(struct tui_term *t, int timeout_ms, struct tui_input *in)
{
    tui_term_wait_fd(t, timeout_ms, -1, in);
}

/* After poll found revents on the terminal: has it gone (hung up, its other side closed,
 * its reads at an end or failing)? A hung-up terminal polls readable as well, and every
 * read of it ends at once (EOF); its ioctls fail (EIO). Readable with nothing to read
 * is an end as well. */
static bool terminal_gone(short revents)
{
    if (revents & (POLLHUP | POLLERR | POLLNVAL))
        return true;
    if (!(revents & POLLIN))
        return false;
    int n = 0;
    if (ioctl(STDIN_FILENO, FIONREAD, &n) != 0)
        return errno == EIO;
    return n == 0;
}

void tui_term_wait_fd(struct tui_term *t, int timeout_ms, int fd, struct tui_input *in)
{
    (void)t;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long deadline = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + timeout_ms;
    for (;;) {
        if (got_signal) {
            char buf[16];
            while (signal_pipe[0] >= 0 && read(signal_pipe[0], buf, sizeof(buf)) > 0)
                ;
            memset(in, 0, sizeof(*in));
            in->kind = TUI_IN_SIGNAL;
            in->signo = got_signal;
            return;
        }
        if (read_input(in))
            return;
        memset(in, 0, sizeof(*in));
        int wait = -1;
        bool last = false; /* the time is up: one look (a poll that does not wait) */
        if (timeout_ms >= 0) {
            clock_gettime(CLOCK_MONOTONIC, &ts);
            long long left = deadline - ((long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
            last = left <= 0;
            wait = last ? 0 : (int)left;
        }
        /* sleep until a key, a signal (the pipe), or an interruption (SIGWINCH: curses then
         * has a KEY_RESIZE for us); the terminal's end is looked for even when not waiting,
         * since no signal need tell of it (a session leader that is not us gets it) */
        struct pollfd fds[3] = {{.fd = STDIN_FILENO, .events = POLLIN},
                                {.fd = signal_pipe[0], .events = POLLIN},
                                {.fd = fd, .events = POLLIN}};
        int rc = poll(fds, 3, wait);
        if (rc > 0 && fds[0].revents && terminal_gone(fds[0].revents)) {
            if (read_input(in)) /* what was typed before it went */
                return;
            memset(in, 0, sizeof(*in));
            in->kind = TUI_IN_SIGNAL; /* the terminal went away */
            in->signo = SIGHUP;
            return;
        }
        if (rc > 0 && fds[2].revents && !(fds[0].revents & POLLIN) && !got_signal) {
            in->kind = TUI_IN_READY;
            return;
        }
        if (last && !got_signal)
            return; /* TUI_IN_NONE; a key just come is read by the next call */
    }
}
