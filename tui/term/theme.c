/*
 * Theme files (YAML, loaded by sim/data/yaml.h into a value tree and read from there), the list
 * of available themes, and the reduction of a theme's colours to what a terminal can show.
 */
#include "tui/term/theme.h"

#include "sim/util/embedded.h"
#include "sim/util/xalloc.h"
#include "sim/data/yaml.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    [TUI_STYLE_CRITICAL] = TUI_ATTR_BOLD | TUI_ATTR_UNDERLINE,
    [TUI_STYLE_HEAT_3] = TUI_ATTR_BOLD,
    [TUI_STYLE_HEAT_4] = TUI_ATTR_BOLD | TUI_ATTR_REVERSE,
};

void tui_theme_init_plain(struct tui_theme *th)
{
    memset(th, 0, sizeof(*th));
    snprintf(th->name, sizeof(th->name), "plain");
    for (int i = 0; i < TUI_STYLE_COUNT; i++)
        th->styles[i].mono = th->styles[i].attrs = mono_defaults[i];
}

/* ---- parsing -------------------------------------------------------------------------- */

/* The theme being read and where its mistakes are reported. */
struct parse {
    const struct sim_yaml_doc *doc; /* borrowed: key positions */
    const char *file;
    struct diag *d;
    struct tui_theme *th;
};

/* A mistake at line:col (where the offending key or value starts); returns -SIM_EINVAL. */
__attribute__((format(printf, 5, 6))) static int fail_at(const struct parse *p, int line, int col,
                                                         const char *key, const char *fmt, ...)
{
    char msg[SIM_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return diag_set(p->d, SIM_EINVAL, p->file, line, col, key, "%s", msg);
}

/* A mistake in key i of map: reported where the key was written. */
static int fail_key(const struct parse *p, const struct sim_value *map, size_t i, const char *key,
                    const char *msg)
{
    int line = map->line, col = map->col;
    sim_yaml_doc_key_pos(p->doc, map, i, &line, &col);
    return fail_at(p, line, col, key, "%s", msg);
}

static bool is_scalar(const struct sim_value *v)
{
    return v->type != SIM_V_LIST && v->type != SIM_V_MAP && v->type != SIM_V_TENSOR;
}

static const char *what(const struct sim_value *v)
{
    switch (v->type) {
    case SIM_V_LIST: return "a list";
    case SIM_V_MAP: return "a map";
    default: return "a scalar";
    }
}

/* A scalar as it reads in the file (near enough: 0x10 reads 16), for names and messages;
 * null is the empty text. Returns buf. */
static const char *scalar_text(const struct sim_value *v, char *buf, size_t size)
{
    switch (v->type) {
    case SIM_V_STR: snprintf(buf, size, "%s", v->u.str.s); break;
    case SIM_V_INT: snprintf(buf, size, "%" PRId64, v->u.i); break;
    case SIM_V_FLOAT: snprintf(buf, size, "%g", v->u.f); break;
    case SIM_V_BOOL: snprintf(buf, size, "%s", v->u.b ? "true" : "false"); break;
    default: snprintf(buf, size, "%s", ""); break;
    }
    return buf;
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

/* attrs / mono: a scalar or a list of scalars. */
static int parse_attrs(const struct parse *p, const struct sim_value *v, const char *key,
                       unsigned *out)
{
    unsigned bits = 0;
    char bad[80], text[100];
    if (is_scalar(v)) {
        if (parse_attr_words(scalar_text(v, text, sizeof(text)), &bits, bad, sizeof(bad)) < 0)
            return fail_at(p, v->line, v->col, key,
                           "unknown attribute '%s' (bold, dim, underline, reverse, italic, "
                           "standout)",
                           bad);
        *out = bits;
        return 0;
    }
    if (v->type != SIM_V_LIST)
        return fail_at(p, v->line, v->col, key, "expected an attribute or a list of them, got %s",
                       what(v));
    for (size_t i = 0; i < v->u.list.len; i++) {
        const struct sim_value *item = v->u.list.items[i];
        if (!is_scalar(item))
            return fail_at(p, item->line, item->col, key, "expected an attribute, got %s",
                           what(item));
        if (parse_attr_words(scalar_text(item, text, sizeof(text)), &bits, bad, sizeof(bad)) < 0)
            return fail_at(p, item->line, item->col, key, "unknown attribute '%s'", bad);
    }
    *out = bits;
    return 0;
}

/* A colour: a name or "#rrggbb" (strings) or an index 0-255. */
static int parse_colour_value(const struct parse *p, const struct sim_value *v, const char *key,
                              struct tui_colour *out)
{
    char text[100];
    if (!is_scalar(v))
        return fail_at(p, v->line, v->col, key, "expected a colour, got %s", what(v));
    scalar_text(v, text, sizeof(text));
    if ((v->type == SIM_V_STR || v->type == SIM_V_INT) && parse_colour(text, out) == 0)
        return 0;
    if (!text[0])
        return fail_at(p, v->line, v->col, key,
                       "missing colour (quote \"#rrggbb\": # starts a comment)");
    return fail_at(p, v->line, v->col, key, "unknown colour '%s' (a name, 0-255 or \"#rrggbb\")",
                   text);
}

/* One style's map {fg, bg, attrs, mono} over *st, which it leaves alone on an error. */
static int parse_style(const struct parse *p, const struct sim_value *map, enum tui_style s,
                       const char *style_name, struct tui_theme_style *st)
{
    bool attrs_set = false, mono_set = false;
    struct tui_theme_style v = *st;
    for (size_t i = 0; i < map->u.map.len; i++) {
        const char *k = map->u.map.keys[i];
        const struct sim_value *val = map->u.map.vals[i];
        char path[256];
        snprintf(path, sizeof(path), "%s.%.99s", style_name, k);
        int rc;
        if (strcmp(k, "fg") == 0) {
            rc = parse_colour_value(p, val, path, &v.fg);
        } else if (strcmp(k, "bg") == 0) {
            rc = parse_colour_value(p, val, path, &v.bg);
        } else if (strcmp(k, "attrs") == 0) {
            rc = parse_attrs(p, val, path, &v.attrs);
            attrs_set = true;
        } else if (strcmp(k, "mono") == 0) {
            rc = parse_attrs(p, val, path, &v.mono);
            mono_set = true;
        } else {
            rc = fail_key(p, map, i, path, "unknown key (fg, bg, attrs, mono are allowed)");
        }
        if (rc < 0)
            return rc;
    }
    /* A style that says how it looks with colours but not without keeps the built-in
     * monochrome look plus its own attributes. */
    if (attrs_set && !mono_set)
        v.mono = mono_defaults[s] | v.attrs;
    *st = v;
    return 0;
}

/* The document's root: a map of style name -> style, and a description. */
static int parse_root(const struct parse *p, const struct sim_value *root)
{
    if (root->type == SIM_V_NULL)
        return fail_at(p, root->line, root->col, NULL,
                       "the theme is empty: expected a map of style names");
    if (root->type != SIM_V_MAP)
        return fail_at(p, root->line, root->col, NULL,
                       "expected a map of style names at the top level");
    for (size_t i = 0; i < root->u.map.len; i++) {
        const char *k = root->u.map.keys[i];
        const struct sim_value *v = root->u.map.vals[i];
        char name[100];
        snprintf(name, sizeof(name), "%s", k);
        enum tui_style st;
        int rc;
        if (strcmp(k, "description") == 0) {
            if (is_scalar(v))
                scalar_text(v, p->th->description, sizeof(p->th->description));
            else
                return fail_at(p, v->line, v->col, "description", "expected text, got %s", what(v));
        } else if (tui_style_parse(k, &st) < 0) {
            return fail_key(p, root, i, name, "unknown style name");
        } else if (v->type != SIM_V_MAP) {
            return fail_at(p, v->line, v->col, name, "expected a map {fg, bg, attrs, mono}, got %s",
                           what(v));
        } else if ((rc = parse_style(p, v, st, name, &p->th->styles[st])) < 0) {
            return rc;
        }
    }
    return 0;
}

/* The sim_yaml_build_fn of themes: applies the document over the struct tui_theme out. */
static int theme_from_doc(const struct sim_value *root, const struct sim_yaml_doc *doc,
                          const char *file, void *out, struct diag *d)
{
    struct parse p = {.doc = doc, .file = file, .d = d, .th = out};
    return parse_root(&p, root);
}

int tui_theme_parse(struct tui_theme *th, const char *text, size_t len, const char *file,
                    struct diag *d)
{
    return sim_yaml_build(text, len, file, theme_from_doc, th, d);
}

/* ---- loading ---------------------------------------------------------------------------- */

/* Load the theme file at path over th; a missing file is -SIM_ENOENT. */
static int load_file(struct tui_theme *th, const char *path, struct diag *d)
{
    if (access(path, F_OK) < 0 && errno == ENOENT)
        return diag_set(d, SIM_ENOENT, path, 0, 0, NULL, "%s", strerror(ENOENT));
    return sim_yaml_build_file(path, theme_from_doc, th, d);
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
    char file[SIM_DIAG_FILE_MAX];
    int rc = -SIM_ENOENT;
    if (is_path(name)) {
        rc = load_file(th, name, d);
    } else {
        if (!valid_name(name, strlen(name)))
            return diag_set(d, SIM_ENOENT, NULL, 0, 0, NULL, "no theme named '%.64s'", name);
        if (user_dir) {
            snprintf(file, sizeof(file), "%s/%s.yaml", user_dir, name);
            rc = load_file(th, file, d);
        }
        if (rc == -SIM_ENOENT) {
            snprintf(file, sizeof(file), "themes/%s.yaml", name);
            const struct sim_embedded_file *f = sim_embedded_find(file);
            if (!f)
                return diag_set(d, SIM_ENOENT, NULL, 0, 0, NULL, "no theme named '%s'", name);
            rc = tui_theme_parse(th, f->data, f->size, file, d);
        }
    }
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
