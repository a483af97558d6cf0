/*
 * YAML -> struct sim_value (see yaml.h). One pass over libyaml's events with an explicit
 * stack of open collections (no recursion on untrusted depth). Each node is attached to
 * its parent as soon as it starts, so on any error freeing the root frees everything.
 * Duplicate keys are found with a hash set of (map, key), so a map with many keys stays
 * linear.
 */
#include "sim/data/yaml.h"

#include "sim/util/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define TAG_PREFIX "tag:yaml.org,2002:"

/* Where the keys of one map were written: pos[2*i], pos[2*i+1] = line, col of key i. */
struct map_pos {
    const struct sim_value *map; /* borrowed: a map of the doc's tree */
    int *pos;                    /* owned */
    size_t n, cap;
};

struct sim_yaml_doc {
    char *file;             /* owned */
    struct sim_value *root; /* owned, NULL once taken */
    struct map_pos *maps;   /* owned; one per parsed map */
    size_t n_maps, cap_maps;
};

/* An open collection. */
struct frame {
    struct sim_value *v; /* borrowed: already attached to its parent (or the root) */
    char *key;           /* owned: a map's key waiting for its value, or NULL */
    char *anchor;        /* owned: anchor to register when the collection ends, or NULL */
    size_t nodes_before; /* node count before this collection started */
    unsigned height;     /* most collection levels in one child (0: only scalars) */
    struct map_pos kp;   /* a map's key positions, moved into the doc when it ends */
};

/* An anchor seen so far; aliases copy its value. */
struct anchor {
    char *name;          /* owned */
    struct sim_value *v; /* borrowed from the tree, or owned when own is set */
    bool own;            /* v is a private copy (an anchored key) */
    size_t size;         /* nodes the anchored node counted for */
    unsigned height;     /* collection levels in it, itself included (0 for a scalar) */
};

/* Hash set of (map, key) pairs for duplicate detection. */
struct key_slot {
    const struct sim_value *map;
    const char *key; /* borrowed from the map */
};

struct loader {
    const char *file;
    const char *buf;
    size_t len;
    struct diag *d;
    int err; /* first error (negative), 0 while all is well */
    unsigned max_depth;
    size_t max_nodes;
    size_t nodes;
    int docs;
    struct sim_value *root; /* owned until handed to the doc */
    struct frame *stack;
    size_t depth, cap;
    struct anchor *anchors;
    size_t n_anchors, cap_anchors;
    struct key_slot *slots;
    size_t n_slots, cap_slots; /* cap_slots is a power of two or 0 */
    struct sim_yaml_doc *doc;
};

static int fail(struct loader *L, enum sim_err code, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int fail(struct loader *L, enum sim_err code, int line, int col, const char *fmt, ...)
{
    if (L->err)
        return L->err;
    char msg[SIM_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    L->err = diag_set(L->d, code, L->file, line, col, NULL, "%s", msg);
    return L->err;
}

static int mark_line(const yaml_mark_t *m)
{
    return m->line < INT_MAX ? (int)m->line + 1 : INT_MAX;
}

static int mark_col(const yaml_mark_t *m)
{
    return m->column < INT_MAX ? (int)m->column + 1 : INT_MAX;
}

/* Line and column (1-based, in bytes) of a byte offset of the input. */
static void offset_pos(const struct loader *L, size_t off, int *line, int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < off && i < L->len; i++) {
        if (L->buf[i] == '\n') {
            if (l < INT_MAX)
                l++;
            c = 1;
        } else if (c < INT_MAX) {
            c++;
        }
    }
    *line = l;
    *col = c;
}

static int parser_error(struct loader *L, const yaml_parser_t *p)
{
    int line, col;
    if (p->error == YAML_MEMORY_ERROR)
        sim_die("out of memory parsing YAML");
    if (p->error == YAML_READER_ERROR) {
        offset_pos(L, p->problem_offset, &line, &col);
        if (p->problem_value != -1)
            return fail(L, SIM_EPARSE, line, col, "YAML syntax error: %s (byte 0x%02x)",
                        p->problem ? p->problem : "unreadable input", p->problem_value & 0xff);
        return fail(L, SIM_EPARSE, line, col, "YAML syntax error: %s",
                    p->problem ? p->problem : "unreadable input");
    }
    line = mark_line(&p->problem_mark);
    col = mark_col(&p->problem_mark);
    if (p->context)
        return fail(L, SIM_EPARSE, line, col, "YAML syntax error: %s %s (line %d, column %d)",
                    p->problem ? p->problem : "invalid input", p->context,
                    mark_line(&p->context_mark), mark_col(&p->context_mark));
    return fail(L, SIM_EPARSE, line, col, "YAML syntax error: %s",
                p->problem ? p->problem : "invalid input");
}

/* ---- duplicate-key set ----------------------------------------------------------------- */

static size_t slot_hash(const struct sim_value *map, const char *key)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)map;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return (size_t)(h ^ (h >> 29));
}

/* Insert (map, key); returns false when it was already there. */
static bool keyset_add(struct loader *L, const struct sim_value *map, const char *key)
{
    if (2 * (L->n_slots + 1) > L->cap_slots) {
        size_t ncap = L->cap_slots ? 2 * L->cap_slots : 64;
        struct key_slot *ns = sim_xcalloc(ncap, sizeof(*ns));
        for (size_t i = 0; i < L->cap_slots; i++) {
            if (!L->slots[i].map)
                continue;
            size_t j = slot_hash(L->slots[i].map, L->slots[i].key) & (ncap - 1);
            while (ns[j].map)
                j = (j + 1) & (ncap - 1);
            ns[j] = L->slots[i];
        }
        free(L->slots);
        L->slots = ns;
        L->cap_slots = ncap;
    }
    size_t j = slot_hash(map, key) & (L->cap_slots - 1);
    while (L->slots[j].map) {
        if (L->slots[j].map == map && strcmp(L->slots[j].key, key) == 0)
            return false;
        j = (j + 1) & (L->cap_slots - 1);
    }
    L->slots[j].map = map;
    L->slots[j].key = key;
    L->n_slots++;
    return true;
}

/* ---- scalars --------------------------------------------------------------------------- */

static bool all_in(const char *s, size_t n, const char *set)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr(set, s[i]) || s[i] == '\0')
            return false;
    return true;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool eq(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* YAML 1.2 core float syntax: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool is_core_float(const char *s, size_t n)
{
    size_t i = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        i++;
    size_t int_digits = 0, frac_digits = 0;
    while (i < n && is_digit(s[i]))
        i++, int_digits++;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && is_digit(s[i]))
            i++, frac_digits++;
    }
    if (int_digits == 0 && frac_digits == 0)
        return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '-' || s[i] == '+'))
            i++;
        size_t exp_digits = 0;
        while (i < n && is_digit(s[i]))
            i++, exp_digits++;
        if (exp_digits == 0)
            return false;
    }
    return i == n;
}

/* strtod in the C locale whatever the process locale (the TUI sets LC_ALL from the
 * environment, which may use a decimal comma). */
static double c_strtod(const char *s, bool *range)
{
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    errno = 0;
    double f = c ? strtod_l(s, NULL, c) : strtod(s, NULL);
    *range = errno == ERANGE && isinf(f);
    if (c)
        freelocale(c);
    return f;
}

/*
 * Type a plain scalar by the core schema. Returns the new value, or NULL after filling the
 * loader's error (an integer or float out of range).
 */
static struct sim_value *resolve_plain(struct loader *L, const char *s, size_t n, int line, int col)
{
    if (n == 0 || eq(s, n, "~") || eq(s, n, "null") || eq(s, n, "Null") || eq(s, n, "NULL"))
        return sim_value_null();
    if (eq(s, n, "true") || eq(s, n, "True") || eq(s, n, "TRUE"))
        return sim_value_bool(true);
    if (eq(s, n, "false") || eq(s, n, "False") || eq(s, n, "FALSE"))
        return sim_value_bool(false);

    char tmp[64];
    bool hex =
        n > 2 && s[0] == '0' && s[1] == 'x' && all_in(s + 2, n - 2, "0123456789abcdefABCDEF");
    bool oct = n > 2 && s[0] == '0' && s[1] == 'o' && all_in(s + 2, n - 2, "01234567");
    size_t sign = n > 0 && (s[0] == '-' || s[0] == '+');
    bool dec = n > sign && all_in(s + sign, n - sign, "0123456789");
    if (hex || oct || dec) {
        if (n >= sizeof(tmp))
            goto out_of_range;
        memcpy(tmp, s, n);
        tmp[n] = '\0';
        errno = 0;
        if (dec) {
            long long v = strtoll(tmp, NULL, 10);
            if (errno == ERANGE)
                goto out_of_range;
            return sim_value_int((int64_t)v);
        }
        unsigned long long u = strtoull(tmp + 2, NULL, hex ? 16 : 8);
        if (errno == ERANGE || u > (unsigned long long)INT64_MAX)
            goto out_of_range;
        return sim_value_int((int64_t)u);
    }

    size_t k = sign;
    const char *r = s + k;
    size_t rn = n - k;
    if (eq(r, rn, ".inf") || eq(r, rn, ".Inf") || eq(r, rn, ".INF"))
        return sim_value_float(s[0] == '-' ? -INFINITY : INFINITY);
    if (eq(s, n, ".nan") || eq(s, n, ".NaN") || eq(s, n, ".NAN"))
        return sim_value_float(NAN);
    if (is_core_float(s, n)) {
        bool range;
        char *copy = sim_xstrndup(s, n);
        double f = c_strtod(copy, &range);
        free(copy);
        if (range) {
            fail(L, SIM_EPARSE, line, col, "float '%.*s' is out of range", (int)(n < 40 ? n : 40),
                 s);
            return NULL;
        }
        return sim_value_float(f);
    }
    return sim_value_strn(s, n);

out_of_range:
    fail(L, SIM_EPARSE, line, col, "integer '%.*s' does not fit in 64 bits", (int)(n < 40 ? n : 40),
         s);
    return NULL;
}

/* Build the value of a scalar event, honouring its tag. NULL after an error. */
static struct sim_value *scalar_value(struct loader *L, const yaml_event_t *ev, int line, int col)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;

    if (!tag)
        return plain ? resolve_plain(L, s, n, line, col) : sim_value_strn(s, n);
    if (strcmp(tag, "!") == 0 || strcmp(tag, TAG_PREFIX "str") == 0)
        return sim_value_strn(s, n);

    enum sim_vtype want;
    if (strcmp(tag, TAG_PREFIX "int") == 0)
        want = SIM_V_INT;
    else if (strcmp(tag, TAG_PREFIX "float") == 0)
        want = SIM_V_FLOAT;
    else if (strcmp(tag, TAG_PREFIX "bool") == 0)
        want = SIM_V_BOOL;
    else if (strcmp(tag, TAG_PREFIX "null") == 0)
        want = SIM_V_NULL;
    else {
        fail(L, SIM_EPARSE, line, col, "unsupported tag '%s'", tag);
        return NULL;
    }
    struct sim_value *v = resolve_plain(L, s, n, line, col);
    if (!v)
        return NULL;
    if (v->type == SIM_V_INT && want == SIM_V_FLOAT) {
        double f = (double)v->u.i;
        v->type = SIM_V_FLOAT;
        v->u.f = f;
    }
    if (v->type != want) {
        fail(L, SIM_EPARSE, line, col, "value '%.*s' does not match its tag !!%s",
             (int)(n < 40 ? n : 40), s, tag + strlen(TAG_PREFIX));
        sim_value_free(v);
        return NULL;
    }
    return v;
}

/* ---- tree building --------------------------------------------------------------------- */

/* Append to a map whose key is known to be new (value.h's map layout is public;
 * sim_value_map_set_take would search the keys again, quadratic for big maps). */
static void map_append(struct sim_value *map, char *key, struct sim_value *val)
{
    if (map->u.map.len == map->u.map.cap) {
        map->u.map.cap = map->u.map.cap ? map->u.map.cap * 2 : 8;
        map->u.map.keys = sim_xreallocarray(map->u.map.keys, map->u.map.cap, sizeof(char *));
        map->u.map.vals =
            sim_xreallocarray(map->u.map.vals, map->u.map.cap,
                              sizeof(*map->u.map.vals)); /* NOLINT(bugprone-sizeof-expression) */
    }
    map->u.map.keys[map->u.map.len] = key;
    map->u.map.vals[map->u.map.len++] = val;
}

static void kp_push(struct map_pos *kp, int line, int col)
{
    if (kp->n == kp->cap) {
        kp->cap = kp->cap ? kp->cap * 2 : 8;
        kp->pos = sim_xreallocarray(kp->pos, kp->cap, 2 * sizeof(int));
    }
    kp->pos[2 * kp->n] = line;
    kp->pos[2 * kp->n + 1] = col;
    kp->n++;
}

static struct frame *top(struct loader *L)
{
    return L->depth ? &L->stack[L->depth - 1] : NULL;
}

/* True when the innermost open collection is a map waiting for a key. */
static bool expects_key(struct loader *L)
{
    struct frame *f = top(L);
    return f && f->v->type == SIM_V_MAP && !f->key;
}

/*
 * Attach a finished or starting node v to the innermost collection (or make it the root).
 * Takes ownership of v. In a map waiting for a key, v must be a string and becomes the key
 * (v is then freed). Returns 0 or the loader's error.
 */
static int attach(struct loader *L, struct sim_value *v, int line, int col)
{
    struct frame *f = top(L);
    if (!f) {
        L->root = v;
        return 0;
    }
    if (f->v->type == SIM_V_LIST) {
        sim_value_list_push_take(f->v, v);
        return 0;
    }
    if (f->key) {
        map_append(f->v, f->key, v);
        f->key = NULL;
        return 0;
    }
    /* v is a key */
    if (v->type != SIM_V_STR) {
        const char *tn = sim_vtype_name(v->type);
        sim_value_free(v);
        return fail(L, SIM_EPARSE, line, col,
                    "mapping keys must be strings, got %s (quote it to use it as a string)", tn);
    }
    if (strlen(v->u.str.s) != v->u.str.len) {
        sim_value_free(v);
        return fail(L, SIM_EPARSE, line, col, "mapping key contains a NUL character");
    }
    char *key = v->u.str.s;
    v->u.str.s = NULL;
    sim_value_free(v);
    if (!keyset_add(L, f->v, key)) {
        fail(L, SIM_EPARSE, line, col, "duplicate key '%s'", key);
        free(key);
        return L->err;
    }
    /* the set keeps a borrowed pointer: the string now lives as the pending key and then
     * in the map, and is never moved */
    f->key = key;
    kp_push(&f->kp, line, col);
    return 0;
}

static int count_nodes(struct loader *L, size_t n, int line, int col)
{
    if (n > L->max_nodes || L->nodes > L->max_nodes - n)
        return fail(L, SIM_ELIMIT, line, col,
                    "document has more than %zu nodes (aliases count with the size of what "
                    "they copy)",
                    L->max_nodes);
    L->nodes += n;
    return 0;
}

static void add_anchor(struct loader *L, const char *name, struct sim_value *v, bool own,
                       size_t size, unsigned height)
{
    if (L->n_anchors == L->cap_anchors) {
        L->cap_anchors = L->cap_anchors ? 2 * L->cap_anchors : 8;
        L->anchors = sim_xreallocarray(L->anchors, L->cap_anchors, sizeof(*L->anchors));
    }
    struct anchor *a = &L->anchors[L->n_anchors++];
    a->name = sim_xstrdup(name);
    a->v = v;
    a->own = own;
    a->size = size;
    a->height = height;
}

static const struct anchor *find_anchor(const struct loader *L, const char *name)
{
    for (size_t i = L->n_anchors; i > 0; i--) /* a redefined anchor: the latest wins */
        if (strcmp(L->anchors[i - 1].name, name) == 0)
            return &L->anchors[i - 1];
    return NULL;
}

/* Record in the innermost collection that a child with h collection levels was added. */
static void note_child_height(struct loader *L, unsigned h)
{
    struct frame *f = top(L);
    if (f && f->height < h)
        f->height = h;
}

static int on_scalar(struct loader *L, const yaml_event_t *ev)
{
    int line = mark_line(&ev->start_mark), col = mark_col(&ev->start_mark);
    if (count_nodes(L, 1, line, col))
        return L->err;
    struct sim_value *v = scalar_value(L, ev, line, col);
    if (!v)
        return L->err;
    v->line = line;
    v->col = col;
    const char *anchor = (const char *)ev->data.scalar.anchor;
    if (anchor && expects_key(L))
        add_anchor(L, anchor, sim_value_clone(v), true, 1, 0); /* the key string moves */
    else if (anchor)
        add_anchor(L, anchor, v, false, 1, 0);
    return attach(L, v, line, col);
}

/* Deep copy for alias expansion: like sim_value_clone, but linear in the size of big maps
 * (keys of a parsed map are already unique). Depth is bounded by the loader's max_depth. */
static struct sim_value *clone_tree(const struct sim_value *v)
{
    struct sim_value *c;
    switch (v->type) {
    case SIM_V_LIST:
        c = sim_value_list();
        for (size_t i = 0; i < v->u.list.len; i++)
            sim_value_list_push_take(c, clone_tree(v->u.list.items[i]));
        break;
    case SIM_V_MAP:
        c = sim_value_map();
        for (size_t i = 0; i < v->u.map.len; i++)
            map_append(c, sim_xstrdup(v->u.map.keys[i]), clone_tree(v->u.map.vals[i]));
        break;
    default: return sim_value_clone(v);
    }
    c->line = v->line;
    c->col = v->col;
    return c;
}

static int on_alias(struct loader *L, const yaml_event_t *ev)
{
    int line = mark_line(&ev->start_mark), col = mark_col(&ev->start_mark);
    const char *name = (const char *)ev->data.alias.anchor;
    const struct anchor *a = find_anchor(L, name);
    if (!a)
        return fail(L, SIM_EPARSE, line, col,
                    "alias '*%s' names no finished anchor (undefined, or refers to an enclosing "
                    "node)",
                    name);
    if (a->height > 0 && L->depth + a->height > L->max_depth)
        return fail(L, SIM_ELIMIT, line, col, "alias '*%s' nests deeper than %u levels", name,
                    L->max_depth);
    if (count_nodes(L, a->size, line, col))
        return L->err;
    struct sim_value *v = clone_tree(a->v);
    note_child_height(L, a->height);
    return attach(L, v, line, col);
}

static int on_collection_start(struct loader *L, const yaml_event_t *ev, bool is_map)
{
    int line = mark_line(&ev->start_mark), col = mark_col(&ev->start_mark);
    const char *tag =
        (const char *)(is_map ? ev->data.mapping_start.tag : ev->data.sequence_start.tag);
    const char *anchor =
        (const char *)(is_map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor);
    if (tag && strcmp(tag, "!") != 0 &&
        strcmp(tag, is_map ? TAG_PREFIX "map" : TAG_PREFIX "seq") != 0)
        return fail(L, SIM_EPARSE, line, col, "unsupported tag '%s' on a %s", tag,
                    is_map ? "map" : "list");
    if (expects_key(L))
        return fail(L, SIM_EPARSE, line, col, "mapping keys must be strings, got a %s",
                    is_map ? "map" : "list");
    if (L->depth >= L->max_depth)
        return fail(L, SIM_ELIMIT, line, col, "nesting deeper than %u levels", L->max_depth);
    size_t before = L->nodes;
    if (count_nodes(L, 1, line, col))
        return L->err;
    struct sim_value *v = is_map ? sim_value_map() : sim_value_list();
    v->line = line;
    v->col = col;
    if (attach(L, v, line, col))
        return L->err;
    if (L->depth == L->cap) {
        L->cap = L->cap ? 2 * L->cap : 16;
        L->stack = sim_xreallocarray(L->stack, L->cap, sizeof(*L->stack));
    }
    struct frame *f = &L->stack[L->depth++];
    memset(f, 0, sizeof(*f));
    f->v = v;
    f->anchor = anchor ? sim_xstrdup(anchor) : NULL;
    f->nodes_before = before;
    f->kp.map = v;
    return 0;
}

static void doc_add_map_pos(struct sim_yaml_doc *doc, struct map_pos *kp)
{
    if (doc->n_maps == doc->cap_maps) {
        doc->cap_maps = doc->cap_maps ? 2 * doc->cap_maps : 16;
        doc->maps = sim_xreallocarray(doc->maps, doc->cap_maps, sizeof(*doc->maps));
    }
    doc->maps[doc->n_maps++] = *kp;
    memset(kp, 0, sizeof(*kp));
}

static int on_collection_end(struct loader *L, const yaml_event_t *ev)
{
    struct frame *f = top(L);
    if (!f)
        return fail(L, SIM_EPARSE, mark_line(&ev->start_mark), mark_col(&ev->start_mark),
                    "unbalanced collection end");
    unsigned h = f->height + 1;
    if (f->anchor)
        add_anchor(L, f->anchor, f->v, false, L->nodes - f->nodes_before, h);
    free(f->anchor);
    f->anchor = NULL;
    if (f->v->type == SIM_V_MAP)
        doc_add_map_pos(L->doc, &f->kp);
    L->depth--;
    note_child_height(L, h);
    return 0;
}

static void loader_fini(struct loader *L)
{
    for (size_t i = 0; i < L->depth; i++) {
        free(L->stack[i].key);
        free(L->stack[i].anchor);
        free(L->stack[i].kp.pos);
    }
    free(L->stack);
    for (size_t i = 0; i < L->n_anchors; i++) {
        free(L->anchors[i].name);
        if (L->anchors[i].own)
            sim_value_free(L->anchors[i].v);
    }
    free(L->anchors);
    free(L->slots);
}

int sim_yaml_load(const char *buf, size_t len, const char *file, const struct sim_yaml_limits *lim,
                  struct sim_yaml_doc **out, struct diag *d)
{
    *out = NULL;
    struct loader L = {
        .file = file,
        .buf = buf ? buf : "",
        .len = len,
        .d = d,
        .max_depth = lim && lim->max_depth ? lim->max_depth : SIM_YAML_MAX_DEPTH,
        .max_nodes = lim && lim->max_nodes ? lim->max_nodes : SIM_YAML_MAX_NODES,
    };
    L.doc = sim_xcalloc(1, sizeof(*L.doc));
    L.doc->file = sim_xstrdup(file ? file : "");

    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        sim_die("out of memory initialising the YAML parser");
    yaml_parser_set_input_string(&parser, (const unsigned char *)L.buf, len);

    bool done = false;
    while (!done && !L.err) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            parser_error(&L, &parser);
            break;
        }
        switch (ev.type) {
        case YAML_STREAM_END_EVENT: done = true; break;
        case YAML_DOCUMENT_START_EVENT:
            if (++L.docs > 1)
                fail(&L, SIM_EPARSE, mark_line(&ev.start_mark), mark_col(&ev.start_mark),
                     "a second YAML document starts here; only one is allowed");
            break;
        case YAML_SCALAR_EVENT: on_scalar(&L, &ev); break;
        case YAML_ALIAS_EVENT: on_alias(&L, &ev); break;
        case YAML_SEQUENCE_START_EVENT: on_collection_start(&L, &ev, false); break;
        case YAML_MAPPING_START_EVENT: on_collection_start(&L, &ev, true); break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: on_collection_end(&L, &ev); break;
        default: break;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);

    int rc = L.err;
    if (rc) {
        sim_value_free(L.root);
        L.root = NULL;
    } else if (!L.root) {
        L.root = sim_value_null();
        L.root->line = 1;
        L.root->col = 1;
    }
    L.doc->root = L.root;
    loader_fini(&L);
    if (rc) {
        sim_yaml_doc_free(L.doc);
        return rc;
    }
    *out = L.doc;
    return 0;
}

int sim_yaml_load_file(const char *path, const struct sim_yaml_limits *lim,
                       struct sim_yaml_doc **out, struct diag *d)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return diag_set(d, SIM_EIO, path, 0, 0, NULL, "cannot open: %s", strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = sim_xmalloc(cap);
    for (;;) {
        if (n == cap) {
            if (cap >= SIM_YAML_MAX_FILE) {
                free(buf);
                fclose(f);
                return diag_set(d, SIM_ELIMIT, path, 0, 0, NULL, "file is larger than %d MiB",
                                SIM_YAML_MAX_FILE >> 20);
            }
            cap *= 2;
            buf = sim_xrealloc(buf, cap);
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (k == 0)
            break;
    }
    int ioerr = ferror(f);
    fclose(f);
    if (ioerr) {
        free(buf);
        return diag_set(d, SIM_EIO, path, 0, 0, NULL, "read error");
    }
    int rc = sim_yaml_load(buf, n, path, lim, out, d);
    free(buf);
    return rc;
}

/* The end of sim_yaml_build*: rc is the loading's result, doc what it loaded (NULL when
 * the loading failed). */
static int build_doc(int rc, struct sim_yaml_doc *doc, const char *file, sim_yaml_build_fn build,
                     void *out, struct diag *d)
{
    if (!doc)
        return rc;
    rc = build(doc->root, doc, file, out, d);
    sim_yaml_doc_free(doc);
    return rc;
}

int sim_yaml_build(const char *buf, size_t len, const char *file, sim_yaml_build_fn build,
                   void *out, struct diag *d)
{
    struct sim_yaml_doc *doc;
    int rc = sim_yaml_load(buf, len, file, NULL, &doc, d);
    return build_doc(rc, doc, file, build, out, d);
}

int sim_yaml_build_file(const char *path, sim_yaml_build_fn build, void *out, struct diag *d)
{
    struct sim_yaml_doc *doc;
    int rc = sim_yaml_load_file(path, NULL, &doc, d);
    return build_doc(rc, doc, path, build, out, d);
}

void sim_yaml_doc_free(struct sim_yaml_doc *doc)
{
    if (!doc)
        return;
    sim_value_free(doc->root);
    for (size_t i = 0; i < doc->n_maps; i++)
        free(doc->maps[i].pos);
    free(doc->maps);
    free(doc->file);
    free(doc);
}

const struct sim_value *sim_yaml_doc_root(const struct sim_yaml_doc *doc)
{
    return doc->root;
}

struct sim_value *sim_yaml_doc_take_root(struct sim_yaml_doc *doc)
{
    struct sim_value *r = doc->root;
    doc->root = NULL;
    return r;
}

const char *sim_yaml_doc_file(const struct sim_yaml_doc *doc)
{
    return doc->file;
}

bool sim_yaml_doc_key_pos(const struct sim_yaml_doc *doc, const struct sim_value *map, size_t i,
                          int *line, int *col)
{
    if (!doc || !map)
        return false;
    for (size_t k = 0; k < doc->n_maps; k++) {
        const struct map_pos *mp = &doc->maps[k];
        if (mp->map != map)
            continue;
        if (i >= mp->n)
            return false;
        *line = mp->pos[2 * i];
        *col = mp->pos[2 * i + 1];
        return true;
    }
    return false;
}

const char *sim_yaml_describe(const struct sim_value *v, char *buf, size_t size)
{
    switch (v->type) {
    case SIM_V_STR:
        snprintf(buf, size, "str '%.40s%s'", v->u.str.s, v->u.str.len > 40 ? "..." : "");
        break;
    case SIM_V_INT: snprintf(buf, size, "int %" PRId64, v->u.i); break;
    case SIM_V_FLOAT: {
        char num[40];
        snprintf(num, sizeof(num), "%.15g", v->u.f);
        /* keep 2.0 recognisable as a float */
        bool plain = strspn(num, "-0123456789") == strlen(num);
        snprintf(buf, size, "float %s%s", num, plain ? ".0" : "");
        break;
    }
    case SIM_V_BOOL: snprintf(buf, size, "bool %s", v->u.b ? "true" : "false"); break;
    default: snprintf(buf, size, "%s", sim_vtype_name(v->type)); break;
    }
    return buf;
}

/* Optimal string alignment distance (a transposition is one edit), capped for long keys. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 40 || m > 40)
        return SIZE_MAX;
    size_t dp[41][41];
    for (size_t i = 0; i <= n; i++)
        dp[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        dp[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t sub = dp[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            size_t best = dp[i - 1][j] + 1 < dp[i][j - 1] + 1 ? dp[i - 1][j] + 1 : dp[i][j - 1] + 1;
            if (sub < best)
                best = sub;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                dp[i - 2][j - 2] + 1 < best)
                best = dp[i - 2][j - 2] + 1;
            dp[i][j] = best;
        }
    return dp[n][m];
}

const char *sim_yaml_closest(const char *key, const char *const *candidates)
{
    size_t len = strlen(key);
    for (const char *const *c = candidates; *c; c++) /* a unit suffix left out */
        if (len > 0 && strncmp(*c, key, len) == 0 && (*c)[len] == '_')
            return *c;
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    for (const char *const *c = candidates; *c; c++) {
        size_t dist = edit_distance(key, *c);
        if (dist < best_d) {
            best_d = dist;
            best = *c;
        }
    }
    return best && best_d > 0 && best_d * 3 <= len ? best : NULL;
}

int sim_yaml_parse(const char *buf, size_t len, const char *file, struct sim_value **out,
                   struct diag *d)
{
    struct sim_yaml_doc *doc;
    *out = NULL;
    int rc = sim_yaml_load(buf, len, file, NULL, &doc, d);
    if (rc)
        return rc;
    *out = sim_yaml_doc_take_root(doc);
    sim_yaml_doc_free(doc);
    return 0;
}
