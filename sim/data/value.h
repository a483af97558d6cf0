/*
 * A small dynamically-typed value tree: null, bool, integer, float, string, list, map
 * (insertion-ordered) and tensor. It carries what the seed documents write as Python
 * dicts: op record params (ADR-0052 D3, with their exact keys and types), the chip config
 * as parsed (the trace's config_snapshot), kernel arguments. Values parsed from YAML keep
 * their source line and column for diagnostics.
 *
 * Ownership: a container owns its items; functions named _take take ownership of the
 * value passed in. Tensors are held by reference (sim_tensor_ref).
 */
#ifndef SIM_VALUE_H
#define SIM_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim_tensor;

enum sim_vtype {
    SIM_V_NULL,
    SIM_V_BOOL,
    SIM_V_INT,
    SIM_V_FLOAT,
    SIM_V_STR,
    SIM_V_LIST, /* also Python tuples: a shape is a list of ints */
    SIM_V_MAP,
    SIM_V_TENSOR,
};

struct sim_value {
    enum sim_vtype type;
    int line, col; /* source position (1-based) when parsed from a file, else 0 */
    union {
        bool b;
        int64_t i;
        double f;
        struct {
            char *s; /* owned, NUL-terminated */
            size_t len;
        } str;
        struct {
            struct sim_value **items; /* owned */
            size_t len, cap;
        } list;
        struct {
            char **keys;             /* owned */
            struct sim_value **vals; /* owned */
            size_t len, cap;
        } map;
        struct sim_tensor *tensor; /* owned reference */
    } u;
};

/* Constructors: each returns a new value the caller owns. */
struct sim_value *sim_value_null(void);
struct sim_value *sim_value_bool(bool b);
struct sim_value *sim_value_int(int64_t i);
struct sim_value *sim_value_float(double f);
struct sim_value *sim_value_str(const char *s);              /* copies s */
struct sim_value *sim_value_strn(const char *s, size_t len); /* copies len bytes */
struct sim_value *sim_value_list(void);
struct sim_value *sim_value_map(void);
struct sim_value *sim_value_tensor(struct sim_tensor *t); /* adds a reference; NULL -> null */
/* A list of n integers (a shape, a list of addresses). */
struct sim_value *sim_value_int_list(const int64_t *v, size_t n);

/* Free v and everything it owns. NULL is a no-op. */
void sim_value_free(struct sim_value *v);

/* Deep copy (tensors are shared by reference, not copied). */
struct sim_value *sim_value_clone(const struct sim_value *v);

/* Append item to a list, taking ownership. Returns item. */
struct sim_value *sim_value_list_push_take(struct sim_value *list, struct sim_value *item);

/* Set key in a map, taking ownership of val; an existing key keeps its position and its
 * old value is freed. Returns val. */
struct sim_value *sim_value_map_set_take(struct sim_value *map, const char *key,
                                         struct sim_value *val);

/* Shorthands for map_set_take with a fresh scalar. */
void sim_value_map_set_int(struct sim_value *map, const char *key, int64_t i);
void sim_value_map_set_str(struct sim_value *map, const char *key, const char *s);
void sim_value_map_set_bool(struct sim_value *map, const char *key, bool b);
void sim_value_map_set_float(struct sim_value *map, const char *key, double f);

/* The value of key in a map, or NULL (also when map is NULL or not a map). Borrowed. */
struct sim_value *sim_value_map_get(const struct sim_value *map, const char *key);

/* Remove key from a map, freeing its value. Returns true when it was there. */
bool sim_value_map_del(struct sim_value *map, const char *key);

/* Typed reads with a fallback for a missing key or another type (ints convert to float). */
int64_t sim_value_get_int(const struct sim_value *map, const char *key, int64_t dflt);
double sim_value_get_float(const struct sim_value *map, const char *key, double dflt);
const char *sim_value_get_str(const struct sim_value *map, const char *key, const char *dflt);
bool sim_value_get_bool(const struct sim_value *map, const char *key, bool dflt);

/* Structural equality (tensors compare by identity). */
bool sim_value_equal(const struct sim_value *a, const struct sim_value *b);

/* Structural equality where tensors compare by content: the same dtype, shape and bytes
 * (two runs' op records hold different tensors with the same data). */
bool sim_value_equal_content(const struct sim_value *a, const struct sim_value *b);

/* Name of a type, for messages: "null", "bool", "int", "float", "str", "list", "map",
 * "tensor". */
const char *sim_vtype_name(enum sim_vtype t);

#endif
