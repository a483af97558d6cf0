/* The value tree (see value.h): construction, containers, lookup, copy and comparison. */
#include "sim/data/value.h"

#include "sim/data/tensor.h"
#include "sim/util/xalloc.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

static struct sim_value *alloc(enum sim_vtype type)
{
    struct sim_value *v = sim_xcalloc(1, sizeof(*v));
    v->type = type;
    return v;
}

struct sim_value *sim_value_null(void)
{
    return alloc(SIM_V_NULL);
}

struct sim_value *sim_value_bool(bool b)
{
    struct sim_value *v = alloc(SIM_V_BOOL);
    v->u.b = b;
    return v;
}

struct sim_value *sim_value_int(int64_t i)
{
    struct sim_value *v = alloc(SIM_V_INT);
    v->u.i = i;
    return v;
}

struct sim_value *sim_value_float(double f)
{
    struct sim_value *v = alloc(SIM_V_FLOAT);
    v->u.f = f;
    return v;
}

struct sim_value *sim_value_strn(const char *s, size_t len)
{
    struct sim_value *v = alloc(SIM_V_STR);
    v->u.str.s = sim_xmalloc(len + 1);
    memcpy(v->u.str.s, s, len);
    v->u.str.s[len] = '\0';
    v->u.str.len = len;
    return v;
}

struct sim_value *sim_value_str(const char *s)
{
    return sim_value_strn(s, strlen(s));
}

struct sim_value *sim_value_list(void)
{
    return alloc(SIM_V_LIST);
}

struct sim_value *sim_value_map(void)
{
    return alloc(SIM_V_MAP);
}

struct sim_value *sim_value_tensor(struct sim_tensor *t)
{
    if (!t)
        return sim_value_null();
    struct sim_value *v = alloc(SIM_V_TENSOR);
    v->u.tensor = sim_tensor_ref(t);
    return v;
}

struct sim_value *sim_value_int_list(const int64_t *vals, size_t n)
{
    struct sim_value *v = sim_value_list();
    for (size_t i = 0; i < n; i++)
        sim_value_list_push_take(v, sim_value_int(vals[i]));
    return v;
}

void sim_value_free(struct sim_value *v)
{
    if (!v)
        return;
    switch (v->type) {
    case SIM_V_STR: free(v->u.str.s); break;
    case SIM_V_LIST:
        for (size_t i = 0; i < v->u.list.len; i++)
            sim_value_free(v->u.list.items[i]);
        free(v->u.list.items);
        break;
    case SIM_V_MAP:
        for (size_t i = 0; i < v->u.map.len; i++) {
            free(v->u.map.keys[i]);
            sim_value_free(v->u.map.vals[i]);
        }
        free(v->u.map.keys);
        free(v->u.map.vals);
        break;
    case SIM_V_TENSOR: sim_tensor_unref(v->u.tensor); break;
    default: break;
    }
    free(v);
}

struct sim_value *sim_value_clone(const struct sim_value *v)
{
    if (!v)
        return NULL;
    struct sim_value *c;
    switch (v->type) {
    case SIM_V_STR: c = sim_value_strn(v->u.str.s, v->u.str.len); break;
    case SIM_V_LIST:
        c = sim_value_list();
        for (size_t i = 0; i < v->u.list.len; i++)
            sim_value_list_push_take(c, sim_value_clone(v->u.list.items[i]));
        break;
    case SIM_V_MAP:
        c = sim_value_map();
        for (size_t i = 0; i < v->u.map.len; i++)
            sim_value_map_set_take(c, v->u.map.keys[i], sim_value_clone(v->u.map.vals[i]));
        break;
    case SIM_V_TENSOR: c = sim_value_tensor(v->u.tensor); break;
    default:
        c = alloc(v->type);
        c->u = v->u;
        break;
    }
    c->line = v->line;
    c->col = v->col;
    return c;
}

struct sim_value *sim_value_list_push_take(struct sim_value *list, struct sim_value *item)
{
    assert(list->type == SIM_V_LIST);
    if (list->u.list.len == list->u.list.cap) {
        list->u.list.cap = list->u.list.cap ? list->u.list.cap * 2 : 4;
        list->u.list.items =
            sim_xreallocarray(list->u.list.items, list->u.list.cap, sizeof(*list->u.list.items));
    }
    list->u.list.items[list->u.list.len++] = item;
    return item;
}

static ptrdiff_t map_find(const struct sim_value *map, const char *key)
{
    for (size_t i = 0; i < map->u.map.len; i++)
        if (strcmp(map->u.map.keys[i], key) == 0)
            return (ptrdiff_t)i;
    return -1;
}

struct sim_value *sim_value_map_set_take(struct sim_value *map, const char *key,
                                         struct sim_value *val)
{
    assert(map->type == SIM_V_MAP);
    ptrdiff_t i = map_find(map, key);
    if (i >= 0) {
        sim_value_free(map->u.map.vals[i]);
        map->u.map.vals[i] = val;
        return val;
    }
    if (map->u.map.len == map->u.map.cap) {
        map->u.map.cap = map->u.map.cap ? map->u.map.cap * 2 : 8;
        map->u.map.keys = sim_xreallocarray(map->u.map.keys, map->u.map.cap, sizeof(char *));
        map->u.map.vals = sim_xreallocarray(map->u.map.vals, map->u.map.cap, sizeof(val));
    }
    map->u.map.keys[map->u.map.len] = sim_xstrdup(key);
    map->u.map.vals[map->u.map.len++] = val;
    return val;
}

void sim_value_map_set_int(struct sim_value *map, const char *key, int64_t i)
{
    sim_value_map_set_take(map, key, sim_value_int(i));
}

void sim_value_map_set_str(struct sim_value *map, const char *key, const char *s)
{
    sim_value_map_set_take(map, key, sim_value_str(s));
}

void sim_value_map_set_bool(struct sim_value *map, const char *key, bool b)
{
    sim_value_map_set_take(map, key, sim_value_bool(b));
}

void sim_value_map_set_float(struct sim_value *map, const char *key, double f)
{
    sim_value_map_set_take(map, key, sim_value_float(f));
}

struct sim_value *sim_value_map_get(const struct sim_value *map, const char *key)
{
    if (!map || map->type != SIM_V_MAP)
        return NULL;
    ptrdiff_t i = map_find(map, key);
    return i >= 0 ? map->u.map.vals[i] : NULL;
}

bool sim_value_map_del(struct sim_value *map, const char *key)
{
    if (!map || map->type != SIM_V_MAP)
        return false;
    ptrdiff_t i = map_find(map, key);
    if (i < 0)
        return false;
    free(map->u.map.keys[i]);
    sim_value_free(map->u.map.vals[i]);
    size_t rest = map->u.map.len - (size_t)i - 1;
    memmove(map->u.map.keys + i, map->u.map.keys + i + 1, rest * sizeof(char *));
    memmove(map->u.map.vals + i, map->u.map.vals + i + 1, rest * sizeof(struct sim_value *));
    map->u.map.len--;
    return true;
}

int64_t sim_value_get_int(const struct sim_value *map, const char *key, int64_t dflt)
{
    const struct sim_value *v = sim_value_map_get(map, key);
    return v && v->type == SIM_V_INT ? v->u.i : dflt;
}

double sim_value_get_float(const struct sim_value *map, const char *key, double dflt)
{
    const struct sim_value *v = sim_value_map_get(map, key);
    if (v && v->type == SIM_V_FLOAT)
        return v->u.f;
    return v && v->type == SIM_V_INT ? (double)v->u.i : dflt;
}

const char *sim_value_get_str(const struct sim_value *map, const char *key, const char *dflt)
{
    const struct sim_value *v = sim_value_map_get(map, key);
    return v && v->type == SIM_V_STR ? v->u.str.s : dflt;
}

bool sim_value_get_bool(const struct sim_value *map, const char *key, bool dflt)
{
    const struct sim_value *v = sim_value_map_get(map, key);
    return v && v->type == SIM_V_BOOL ? v->u.b : dflt;
}

/* Tensors of the same dtype and shape holding the same bytes. */
static bool tensor_same_content(const struct sim_tensor *x, const struct sim_tensor *y)
{
    if (x == y)
        return true;
    if (!x || !y || x->dtype != y->dtype || x->ndim != y->ndim || x->nbytes != y->nbytes)
        return false;
    for (unsigned i = 0; i < x->ndim; i++)
        if (x->shape[i] != y->shape[i])
            return false;
    /* a chunk at a time: pattern-backed tensors are compared without materialising them */
    unsigned char a[4096], b[4096];
    for (size_t off = 0; off < x->nbytes; off += sizeof(a)) {
        size_t k = x->nbytes - off < sizeof(a) ? x->nbytes - off : sizeof(a);
        sim_tensor_read_bytes(x, off, k, a);
        sim_tensor_read_bytes(y, off, k, b);
        if (memcmp(a, b, k) != 0)
            return false;
    }
    return true;
}

/* Structural equality; tensors by content or by identity. */
static bool equal(const struct sim_value *a, const struct sim_value *b, bool content)
{
    if (!a || !b)
        return a == b;
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case SIM_V_NULL: return true;
    case SIM_V_BOOL: return a->u.b == b->u.b;
    case SIM_V_INT: return a->u.i == b->u.i;
    case SIM_V_FLOAT: return a->u.f == b->u.f;
    case SIM_V_STR:
        return a->u.str.len == b->u.str.len && memcmp(a->u.str.s, b->u.str.s, a->u.str.len) == 0;
    case SIM_V_LIST:
        if (a->u.list.len != b->u.list.len)
            return false;
        for (size_t i = 0; i < a->u.list.len; i++)
            if (!equal(a->u.list.items[i], b->u.list.items[i], content))
                return false;
        return true;
    case SIM_V_MAP:
        if (a->u.map.len != b->u.map.len)
            return false;
        for (size_t i = 0; i < a->u.map.len; i++)
            if (strcmp(a->u.map.keys[i], b->u.map.keys[i]) != 0 ||
                !equal(a->u.map.vals[i], b->u.map.vals[i], content))
                return false;
        return true;
    case SIM_V_TENSOR:
        return content ? tensor_same_content(a->u.tensor, b->u.tensor) : a->u.tensor == b->u.tensor;
    }
    return false;
}

bool sim_value_equal(const struct sim_value *a, const struct sim_value *b)
{
    return equal(a, b, false);
}

bool sim_value_equal_content(const struct sim_value *a, const struct sim_value *b)
{
    return equal(a, b, true);
}

const char *sim_vtype_name(enum sim_vtype t)
{
    static const char *const names[] = {"null", "bool", "int", "float",
                                        "str",  "list", "map", "tensor"};
    return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}
