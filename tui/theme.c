/*
 * Theme files (YAML, read with libyaml's event parser), the list of available themes, and
 * the reduction of a theme's colours to what a terminal can show.
 */
#include "tui/theme.h"

#include "sim/embedded.h"
#include "sim/xalloc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

enum { THEME_FILE_MAX = 1 << 20 };

/* Without colours, each style still needs to stand out where it matters. */
static const unsigned mono_defaults[TUI_STYLE_COUNT] = {
    [TUI_STYLE_DIM] = TUI_ATTR_DIM,
    [TUI_STYLE_HEADER] = TUI_ATTR_REVERSE,
    [TUI_STYLE_HEADER_MODE] = TUI_ATTR_REVERSE | TUI_ATTR_BOLD,
    [TUI_STYLE_FOOTER] = TUI_ATTR_REVERSE,
    [TUI_STYLE_FOOTER_KEY] = TUI_ATTR_REVERSE | TUI_ATTR_BOLD,
    [TUI_STYLE_STATUS] = TUI_ATTR_BOLD,
    [TUI_STYLE_ERROR] = TUI_ATTR_BOLD,
    [TUI_STYLE_PROMPT] = TUI_ATTR_BOLD,
    [TUI_STYLE_TITLE_FOCUS] = TUI_ATTR_REVERSE | TUI_ATTR_BOLD,
    [TUI_STYLE_CURSOR] = TUI_ATTR_REVERSE,
    [TUI_STYLE_MARKER] = TUI_ATTR_BOLD,
    [TUI_STYLE_LABEL_SEL] = TUI_ATTR_REVERSE,
    [TUI_STYLE_GROUP] = TUI_ATTR_BOLD,
    [TUI_STYLE_OP_INFLIGHT] = TUI_ATTR_BOLD,
    [TUI_STYLE_OP_SELECTED] = TUI_ATTR_REVERSE,
    [TUI_STYLE_OP_TEXT] = TUI_ATTR_REVERSE,
    [TUI_STYLE_TOKEN_ALT] = TUI_ATTR_DIM,
    [TUI_STYLE_BAR_EMPTY] = TUI_ATTR_DIM,
    [TUI_STYLE_VALUE] = TUI_ATTR_BOLD,
    [TUI_STYLE_KEY] = TUI_ATTR_BOLD,
    [TUI_STYLE_TAB_ACTIVE] = TUI_ATTR_REVERSE,
    [TUI_STYLE_MEM_LIVE] = TUI_ATTR_BOLD,
    [TUI_STYLE_SELECTION] = TUI_ATTR_REVERSE,
    [TUI_STYLE_MATCH] = TUI_ATTR_UNDERLINE,
};

void tui_theme_init_plain(struct tui_theme *th)
{
    memset(th, 0, sizeof(*th));
    snprintf(th->name, sizeof(th->name), "plain");
    for (int i = 0; i < TUI_STYLE_COUNT; i++)
        th->styles[i].mono = th->styles[i].attrs = mono_defaults[i];
}

/* ---- parsing -------------------------------------------------------------------------- */

struct parse {
    yaml_parser_t parser;
    const char *file;
    struct diag *d;
    struct tui_theme *th;
};

__attribute__((format(printf, 5, 6))) static int
fail_at(struct parse *p, const yaml_mark_t *m, const char *key, int code, const char *fmt, ...)
{
    char msg[SIM_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return diag_set(p->d, (enum sim_err)code, p->file, m ? (int)m->line + 1 : 0,
                    m ? (int)m->column + 1 : 0, key, "%s", msg);
}

/* The next event; a syntax error becomes a diagnostic. */
static int next_event(struct parse *p, yaml_event_t *ev)
{
    if (yaml_parser_parse(&p->parser, ev))
        return 0;
    const char *problem = p->parser.problem ? p->parser.problem : "malformed YAML";
    return fail_at(p, &p->parser.problem_mark, NULL, SIM_EPARSE, "%s", problem);
}

static const char *event_what(const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_SCALAR_EVENT: return "a scalar";
    case YAML_SEQUENCE_START_EVENT: return "a list";
    case YAML_MAPPING_START_EVENT: return "a map";
    case YAML_ALIAS_EVENT: return "an alias";
    default: return "the end of a block";
    }
}

static const char *scalar(const yaml_event_t *ev)
{
    return (const char *)ev->data.scalar.value;
}

/* A scalar, shortened, for a message (diag_format escapes what it prints). */
static void quote(const char *s, char *out, size_t size)
{
    snprintf(out, size, "%s", s);
}

static const struct {
    const char *name;
    int index;
} colour_names[] = {
    {"black", 0},        {"red", 1},           {"green", 2},       {"yellow", 3},
    {"blue", 4},         {"magenta", 5},       {"cyan", 6},        {"white", 7},
    {"brightblack", 8},  {"grey", 8},          {"gray", 8},        {"brightred", 9},
    {"brightgreen", 10}, {"brightyellow", 11}, {"brightblue", 12}, {"brightmagenta", 13},
    {"brightcyan", 14},  {"brightwhite", 15},
};

/* Parse a colour; returns 0 or -1. */
static int parse_colour(const char *s, struct tui_colour *out)
{
    char norm[32];
    size_t n = 0;
    for (const char *q = s; *q && n + 1 < sizeof(norm); q++)
        if (*q != '-' && *q != '_' && *q != ' ')
            norm[n++] = (char)tolower((unsigned char)*q);
    norm[n] = '\0';
    if (strlen(s) >= sizeof(norm))
        return -1;
    if (strcmp(norm, "default") == 0 || strcmp(norm, "none") == 0) {
        *out = (struct tui_colour){TUI_COLOUR_DEFAULT, 0};
        return 0;
    }
    for (size_t i = 0; i < sizeof(colour_names) / sizeof(colour_names[0]); i++) {
        if (strcmp(norm, colour_names[i].name) == 0) {
            *out = (struct tui_colour){TUI_COLOUR_INDEX, (uint32_t)colour_names[i].index};
            return 0;
        }
    }
    char *end;
    if (norm[0] == '#' && strlen(norm) == 7) {
        unsigned long v = strtoul(norm + 1, &end, 16);
        if (*end || !isxdigit((unsigned char)norm[1]))
            return -1;
        *out = (struct tui_colour){TUI_COLOUR_RGB, (uint32_t)v};
        return 0;
    }
    if (isdigit((unsigned char)norm[0])) {
        unsigned long v = strtoul(norm, &end, 10);
        if (*end || v > 255)
            return -1;
        *out = (struct tui_colour){TUI_COLOUR_INDEX, (uint32_t)v};
        return 0;
    }
    return -1;
}

static const struct {
    const char *name;
    unsigned bit;
} attr_names[] = {
    {"bold", TUI_ATTR_BOLD},
    {"dim", TUI_ATTR_DIM},
    {"underline", TUI_ATTR_UNDERLINE},
    {"reverse", TUI_ATTR_REVERSE},
    {"italic", TUI_ATTR_ITALIC},
    {"standout", TUI_ATTR_STANDOUT},
    {"none", 0},
    {"normal", 0},
};

/* Add the attributes named in s (separated by commas, spaces, '|' or '+') to *bits;
 * returns 0, or -1 with the offending word in bad. */
static int parse_attr_words(const char *s, unsigned *bits, char *bad, size_t badsize)
{
    const char *q = s;
    while (*q) {
        while (*q == ',' || *q == ' ' || *q == '|' || *q == '+')
            q++;
        size_t n = strcspn(q, ", |+");
        if (n == 0)
            break;
        bool found = false;
        for (size_t i = 0; i < sizeof(attr_names) / sizeof(attr_names[0]); i++) {
            if (strlen(attr_names[i].name) == n && strncmp(q, attr_names[i].name, n) == 0) {
                *bits |= attr_names[i].bit;
                found = true;
            }
        }
        if (!found) {
            snprintf(bad, badsize, "%.*s", (int)(n < 64 ? n : 64), q);
            return -1;
        }
        q += n;
    }
    return 0;
}

/* attrs / mono: a scalar or a list of scalars. ev is the value's first event. */
static int parse_attrs(struct parse *p, yaml_event_t *ev, const char *key, unsigned *out)
{
    unsigned bits = 0;
    char bad[80], q[100];
    if (ev->type == YAML_SCALAR_EVENT) {
        if (parse_attr_words(scalar(ev), &bits, bad, sizeof(bad)) < 0) {
            quote(bad, q, sizeof(q));
            return fail_at(p, &ev->start_mark, key, SIM_EINVAL,
                           "unknown attribute '%s' (bold, dim, underline, reverse, italic, "
                           "standout)",
                           q);
        }
        *out = bits;
        return 0;
    }
    if (ev->type != YAML_SEQUENCE_START_EVENT)
        return fail_at(p, &ev->start_mark, key, SIM_EINVAL,
                       "expected an attribute or a list of them, got %s", event_what(ev));
    for (;;) {
        yaml_event_t item;
        int rc = next_event(p, &item);
        if (rc < 0)
            return rc;
        if (item.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&item);
            break;
        }
        if (item.type != YAML_SCALAR_EVENT) {
            rc = fail_at(p, &item.start_mark, key, SIM_EINVAL, "expected an attribute, got %s",
                         event_what(&item));
            yaml_event_delete(&item);
            return rc;
        }
        if (parse_attr_words(scalar(&item), &bits, bad, sizeof(bad)) < 0) {
            quote(bad, q, sizeof(q));
            rc = fail_at(p, &item.start_mark, key, SIM_EINVAL, "unknown attribute '%s'", q);
            yaml_event_delete(&item);
            return rc;
        }
        yaml_event_delete(&item);
    }
    *out = bits;
    return 0;
}

/* One style's map: {fg, bg, attrs, mono}. The MAPPING_START was consumed. */
static int parse_style(struct parse *p, const char *style_name, struct tui_theme_style *st)
{
    bool attrs_set = false, mono_set = false;
    struct tui_theme_style v = *st;
    for (;;) {
        yaml_event_t kev, vev;
        char path[256], q[100];
        int rc = next_event(p, &kev);
        if (rc < 0)
            return rc;
        if (kev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&kev);
            break;
        }
        if (kev.type != YAML_SCALAR_EVENT) {
            rc = fail_at(p, &kev.start_mark, style_name, SIM_EINVAL,
                         "expected a key (fg, bg, attrs, mono), got %s", event_what(&kev));
            yaml_event_delete(&kev);
            return rc;
        }
        const char *k = scalar(&kev);
        quote(k, q, sizeof(q));
        snprintf(path, sizeof(path), "%s.%s", style_name, q);
        rc = next_event(p, &vev);
        if (rc < 0) {
            yaml_event_delete(&kev);
            return rc;
        }
        if (strcmp(k, "fg") == 0 || strcmp(k, "bg") == 0) {
            struct tui_colour col;
            if (vev.type != YAML_SCALAR_EVENT) {
                rc = fail_at(p, &vev.start_mark, path, SIM_EINVAL, "expected a colour, got %s",
                             event_what(&vev));
            } else if (parse_colour(scalar(&vev), &col) < 0) {
                char cq[100];
                quote(scalar(&vev), cq, sizeof(cq));
                if (*scalar(&vev))
                    rc = fail_at(p, &vev.start_mark, path, SIM_EINVAL,
                                 "unknown colour '%s' (a name, 0-255 or \"#rrggbb\")", cq);
                else
                    rc = fail_at(p, &vev.start_mark, path, SIM_EINVAL,
                                 "missing colour (quote \"#rrggbb\": # starts a comment)");
            } else if (k[0] == 'f') {
                v.fg = col;
            } else {
                v.bg = col;
            }
        } else if (strcmp(k, "attrs") == 0) {
            rc = parse_attrs(p, &vev, path, &v.attrs);
            attrs_set = true;
        } else if (strcmp(k, "mono") == 0) {
            rc = parse_attrs(p, &vev, path, &v.mono);
            mono_set = true;
        } else {
            rc = fail_at(p, &kev.start_mark, path, SIM_EINVAL,
                         "unknown key (fg, bg, attrs, mono are allowed)");
        }
        yaml_event_delete(&kev);
        yaml_event_delete(&vev);
        if (rc < 0)
            return rc;
    }
    /* A style that says how it looks with colours but not without keeps the built-in
     * monochrome look plus its own attributes. */
    if (attrs_set && !mono_set) {
        enum tui_style s;
        tui_style_parse(style_name, &s);
        v.mono = mono_defaults[s] | v.attrs;
    }
    *st = v;
    return 0;
}

static int parse_root(struct parse *p)
{
    yaml_event_t ev;
    int rc;
    /* STREAM_START, DOCUMENT_START, then the root map. */
    for (int i = 0; i < 3; i++) {
        if ((rc = next_event(p, &ev)) < 0)
            return rc;
        yaml_event_type_t got = ev.type;
        yaml_mark_t mark = ev.start_mark;
        bool empty_scalar = got == YAML_SCALAR_EVENT && ev.data.scalar.length == 0;
        yaml_event_delete(&ev);
        if (got == YAML_STREAM_END_EVENT || empty_scalar)
            return fail_at(p, &mark, NULL, SIM_EINVAL,
                           "the theme is empty: expected a map of style names");
        if (i == 2 && got != YAML_MAPPING_START_EVENT)
            return fail_at(p, &mark, NULL, SIM_EINVAL,
                           "expected a map of style names at the top level");
    }
    for (;;) {
        if ((rc = next_event(p, &ev)) < 0)
            return rc;
        if (ev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        char q[100];
        if (ev.type != YAML_SCALAR_EVENT) {
            rc = fail_at(p, &ev.start_mark, NULL, SIM_EINVAL, "expected a style name, got %s",
                         event_what(&ev));
            yaml_event_delete(&ev);
            return rc;
        }
        quote(scalar(&ev), q, sizeof(q));
        yaml_event_t vev;
        if ((rc = next_event(p, &vev)) < 0) {
            yaml_event_delete(&ev);
            return rc;
        }
        enum tui_style st;
        if (strcmp(scalar(&ev), "description") == 0) {
            if (vev.type != YAML_SCALAR_EVENT)
                rc = fail_at(p, &vev.start_mark, "description", SIM_EINVAL, "expected text, got %s",
                             event_what(&vev));
            else
                quote(scalar(&vev), p->th->description, sizeof(p->th->description));
        } else if (tui_style_parse(scalar(&ev), &st) < 0) {
            rc = fail_at(p, &ev.start_mark, q, SIM_EINVAL, "unknown style name");
        } else if (vev.type != YAML_MAPPING_START_EVENT) {
            rc = fail_at(p, &vev.start_mark, q, SIM_EINVAL,
                         "expected a map {fg, bg, attrs, mono}, got %s", event_what(&vev));
        } else {
            rc = parse_style(p, q, &p->th->styles[st]);
        }
        yaml_event_delete(&ev);
        yaml_event_delete(&vev);
        if (rc < 0)
            return rc;
    }
    if ((rc = next_event(p, &ev)) < 0)
        return rc;
    yaml_event_delete(&ev); /* DOCUMENT_END */
    if ((rc = next_event(p, &ev)) < 0)
        return rc;
    yaml_event_type_t t = ev.type;
    yaml_mark_t mark = ev.start_mark;
    yaml_event_delete(&ev);
    if (t != YAML_STREAM_END_EVENT)
        return fail_at(p, &mark, NULL, SIM_EINVAL, "a theme file holds one YAML document");
    return 0;
}

int tui_theme_parse(struct tui_theme *th, const char *text, size_t len, const char *file,
                    struct diag *d)
{
    struct parse p = {.file = file, .d = d, .th = th};
    if (!yaml_parser_initialize(&p.parser))
        return diag_set(d, SIM_ENOMEM, file, 0, 0, NULL, "out of memory starting the parser");
    yaml_parser_set_input_string(&p.parser, (const unsigned char *)text, len);
    int rc = parse_root(&p);
    yaml_parser_delete(&p.parser);
    return rc;
}

/* ---- loading ---------------------------------------------------------------------------- */

/* Read a whole file (at most THEME_FILE_MAX bytes). Returns 0 or a negative code. */
static int read_file(const char *path, char **out, size_t *len, struct diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return diag_set(d, errno == ENOENT ? SIM_ENOENT : SIM_EIO, path, 0, 0, NULL, "%s",
                        strerror(errno));
    char *buf = sim_xmalloc(THEME_FILE_MAX + 1);
    size_t n = fread(buf, 1, THEME_FILE_MAX + 1, f);
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return diag_set(d, SIM_EIO, path, 0, 0, NULL, "cannot read the file");
    }
    if (n > THEME_FILE_MAX) {
        free(buf);
        return diag_set(d, SIM_ELIMIT, path, 0, 0, NULL, "larger than %d bytes: not a theme",
                        THEME_FILE_MAX);
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

static bool is_path(const char *name)
{
    size_t n = strlen(name);
    return strchr(name, '/') || (n > 5 && strcmp(name + n - 5, ".yaml") == 0);
}

/* Names are file names without ".yaml": letters, digits, '-', '_' and '.'. */
static bool valid_name(const char *name, size_t n)
{
    if (n == 0 || n > 48 || name[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && !strchr("-_.", name[i]))
            return false;
    return true;
}

static int load_default(struct tui_theme *th)
{
    tui_theme_init_plain(th);
    const struct sim_embedded_file *f = sim_embedded_find("themes/default.yaml");
    if (!f)
        return 0;
    struct diag d;
    if (tui_theme_parse(th, f->data, f->size, "themes/default.yaml", &d) < 0) {
        tui_theme_init_plain(th);
        return -SIM_EINVAL;
    }
    snprintf(th->name, sizeof(th->name), "default");
    return 0;
}

int tui_theme_load(struct tui_theme *th, const char *name, const char *user_dir, struct diag *d)
{
    load_default(th);
    struct tui_theme def = *th;
    char *text = NULL;
    size_t len = 0;
    char file[SIM_DIAG_FILE_MAX];
    int rc;
    if (is_path(name)) {
        snprintf(file, sizeof(file), "%s", name);
        rc = read_file(name, &text, &len, d);
    } else {
        if (!valid_name(name, strlen(name)))
            return diag_set(d, SIM_ENOENT, NULL, 0, 0, NULL, "no theme named '%.64s'", name);
        rc = -SIM_ENOENT;
        if (user_dir) {
            snprintf(file, sizeof(file), "%s/%s.yaml", user_dir, name);
            rc = read_file(file, &text, &len, d);
            if (rc < 0 && rc != -SIM_ENOENT)
                return rc;
        }
        if (rc == -SIM_ENOENT) {
            snprintf(file, sizeof(file), "themes/%s.yaml", name);
            const struct sim_embedded_file *f = sim_embedded_find(file);
            if (!f)
                return diag_set(d, SIM_ENOENT, NULL, 0, 0, NULL, "no theme named '%s'", name);
            text = sim_xstrndup(f->data, f->size);
            len = f->size;
            rc = 0;
        }
    }
    if (rc < 0)
        return rc;
    rc = tui_theme_parse(th, text, len, file, d);
    free(text);
    if (rc < 0) {
        *th = def;
        return rc;
    }
    snprintf(th->name, sizeof(th->name), "%s", name);
    return 0;
}

char *tui_theme_user_dir(void)
{
    const char *xdg = getenv("XDG_CONFIG_HOME");
    if (xdg && xdg[0] == '/')
        return sim_xasprintf("%s/npuscope/themes", xdg);
    const char *home = getenv("HOME");
    if (home && *home)
        return sim_xasprintf("%s/.config/npuscope/themes", home);
    return NULL;
}

static bool list_has(const struct tui_theme_list *l, const char *name)
{
    for (size_t i = 0; i < l->len; i++)
        if (strcmp(l->names[i], name) == 0)
            return true;
    return false;
}

static void list_add(struct tui_theme_list *l, const char *name, size_t n)
{
    char *s = sim_xstrndup(name, n);
    if (list_has(l, s)) {
        free(s);
        return;
    }
    l->names = sim_xreallocarray(l->names, l->len + 1, sizeof(*l->names));
    l->names[l->len++] = s;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void tui_theme_list_init(struct tui_theme_list *l, const char *user_dir)
{
    *l = (struct tui_theme_list){0};
    static const char *const first[] = {"default", "light", "high-contrast", "mono"};
    for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++) {
        char path[64];
        snprintf(path, sizeof(path), "themes/%s.yaml", first[i]);
        if (sim_embedded_find(path))
            list_add(l, first[i], strlen(first[i]));
    }
    size_t mark = l->len;
    for (const struct sim_embedded_file *f = sim_embedded_files; f->name; f++) {
        size_t n = strlen(f->name);
        if (strncmp(f->name, "themes/", 7) == 0 && n > 12 && strcmp(f->name + n - 5, ".yaml") == 0)
            list_add(l, f->name + 7, n - 12);
    }
    DIR *dir = user_dir ? opendir(user_dir) : NULL;
    for (struct dirent *e; dir && (e = readdir(dir));) {
        size_t n = strlen(e->d_name);
        if (n > 5 && strcmp(e->d_name + n - 5, ".yaml") == 0 && valid_name(e->d_name, n - 5))
            list_add(l, e->d_name, n - 5);
    }
    if (dir)
        closedir(dir);
    qsort(l->names + mark, l->len - mark, sizeof(*l->names), cmp_str);
}

void tui_theme_list_fini(struct tui_theme_list *l)
{
    for (size_t i = 0; i < l->len; i++)
        free(l->names[i]);
    free(l->names);
    *l = (struct tui_theme_list){0};
}

/* ---- colours ------------------------------------------------------------------------------ */

/* xterm's default 16 colours. */
static const uint32_t palette16[16] = {
    0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5,
    0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff,
};

static const int cube_levels[6] = {0, 95, 135, 175, 215, 255};

/* RGB of a palette index (xterm's 256-colour palette). */
static uint32_t index_rgb(int i)
{
    if (i < 16)
        return palette16[i];
    if (i < 232) {
        i -= 16;
        return (uint32_t)(cube_levels[i / 36] << 16 | cube_levels[i / 6 % 6] << 8 |
                          cube_levels[i % 6]);
    }
    int g = 8 + 10 * (i - 232);
    return (uint32_t)(g << 16 | g << 8 | g);
}

static long dist2(uint32_t a, uint32_t b)
{
    long dr = (long)(a >> 16 & 255) - (long)(b >> 16 & 255);
    long dg = (long)(a >> 8 & 255) - (long)(b >> 8 & 255);
    long db = (long)(a & 255) - (long)(b & 255);
    return 3 * dr * dr + 4 * dg * dg + 2 * db * db;
}

int tui_colour_nearest(uint32_t rgb, int n)
{
    int best = 0;
    long bestd = -1;
    for (int i = n > 16 ? 16 : 0; i < n; i++) {
        long dd = dist2(rgb, index_rgb(i));
        if (bestd < 0 || dd < bestd)
            best = i, bestd = dd;
    }
    return best;
}

/* A theme colour on a terminal of ncolours (8, 16 or 256); *bold is set when the 8-colour
 * reduction of a bright foreground needs it. */
static int reduce(struct tui_colour c, int ncolours, bool fg, bool *bold)
{
    if (c.kind == TUI_COLOUR_DEFAULT)
        return -1;
    int i;
    if (c.kind == TUI_COLOUR_RGB)
        i = tui_colour_nearest(c.value, ncolours >= 256 ? 256 : 16);
    else
        i = (int)c.value;
    if (ncolours >= 256)
        return i;
    if (i >= 16)
        i = tui_colour_nearest(index_rgb(i), 16);
    if (ncolours >= 16 || i < 8)
        return i;
    if (i == 8) /* grey: white text reads, a black background stays a background */
        return fg ? 7 : 0;
    if (fg)
        *bold = true;
    return i - 8;
}

struct tui_theme_resolved tui_theme_resolve(const struct tui_theme *th, enum tui_style st,
                                            int ncolours)
{
    const struct tui_theme_style *s = &th->styles[st];
    if (ncolours < 8)
        return (struct tui_theme_resolved){-1, -1, s->mono};
    bool bold = false;
    struct tui_theme_resolved r = {reduce(s->fg, ncolours, true, &bold),
                                   reduce(s->bg, ncolours, false, &bold), s->attrs};
    if (bold)
        r.attrs |= TUI_ATTR_BOLD;
    return r;
}
