/* cJSON trees to value trees, and JSON values described for messages (see json.h). */
#include "trace/model/json.h"

#include "trace/model/format.h"

#include "sim/util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SMALL_OBJECT = 64 }; /* up to this many members, duplicates are found by scanning */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Append key -> val to map without looking for the key (the caller knows it is new). */
static void map_append_take(struct sim_value *map, const char *key, struct sim_value *val)
{
    if (map->u.map.len == map->u.map.cap) {
        map->u.map.cap = map->u.map.cap ? map->u.map.cap * 2 : 8;
        map->u.map.keys = sim_xreallocarray(map->u.map.keys, map->u.map.cap, sizeof(char *));
        map->u.map.vals =
            sim_xreallocarray(map->u.map.vals, map->u.map.cap, sizeof(struct sim_value *));
    }
    map->u.map.keys[map->u.map.len] = sim_xstrdup(key);
    map->u.map.vals[map->u.map.len++] = val;
}

/* An object's members as a map; a repeated key keeps its first value, like
 * cJSON_GetObjectItem. Large objects find repeats through a hash set, not a scan. */
static struct sim_value *object_to_value(const cJSON *j)
{
    struct sim_value *m = sim_value_map();
    size_t n = 0;
    for (const cJSON *c = j->child; c; c = c->next)
        n++;
    if (n <= SMALL_OBJECT) {
        for (const cJSON *c = j->child; c; c = c->next) {
            const char *k = c->string ? c->string : "";
            if (!sim_value_map_get(m, k))
                map_append_take(m, k, trace_json_to_value(c));
        }
        return m;
    }
    size_t cap = 1;
    while (cap < 2 * n)
        cap *= 2;
    const char **set = sim_xcalloc(cap, sizeof(*set));
    for (const cJSON *c = j->child; c; c = c->next) {
        const char *k = c->string ? c->string : "";
        size_t i = hash_str(k) & (cap - 1);
        bool dup = false;
        for (; set[i]; i = (i + 1) & (cap - 1))
            if (strcmp(set[i], k) == 0) {
                dup = true;
                break;
            }
        if (dup)
            continue;
        set[i] = k;
        map_append_take(m, k, trace_json_to_value(c));
    }
    free(set);
    return m;
}

struct sim_value *trace_json_to_value(const cJSON *j)
{
    if (!j)
        return NULL;
    if (cJSON_IsBool(j))
        return sim_value_bool(cJSON_IsTrue(j));
    if (cJSON_IsNumber(j)) {
        double d = j->valuedouble;
        if (d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0)
            return sim_value_int((int64_t)d);
        return sim_value_float(d);
    }
    if (cJSON_IsString(j))
        return sim_value_str(j->valuestring);
    if (cJSON_IsArray(j)) {
        struct sim_value *l = sim_value_list();
        for (const cJSON *c = j->child; c; c = c->next)
            sim_value_list_push_take(l, trace_json_to_value(c));
        return l;
    }
    if (cJSON_IsObject(j))
        return object_to_value(j);
    return sim_value_null();
}

bool trace_json_uint(const cJSON *j, uint64_t *out)
{
    if (!cJSON_IsNumber(j))
        return false;
    double d = j->valuedouble;
    if (!(d >= 0 && d <= TRACE_MAX_INT) || d != floor(d))
        return false;
    *out = (uint64_t)d;
    return true;
}

const char *trace_json_describe(const cJSON *j, char *buf, size_t size)
{
    if (!j) {
        snprintf(buf, size, "nothing");
    } else if (cJSON_IsNumber(j)) {
        double d = j->valuedouble;
        if (isinf(d))
            snprintf(buf, size, "%s", d > 0 ? "inf" : "-inf");
        else if (d == floor(d) && fabs(d) < 1e21)
            snprintf(buf, size, "%.0f", d);
        else
            snprintf(buf, size, "%.17g", d);
    } else if (cJSON_IsString(j)) {
        size_t n = strlen(j->valuestring);
        if (n > 40)
            snprintf(buf, size, "\"%.40s...\"", j->valuestring);
        else
            snprintf(buf, size, "\"%s\"", j->valuestring);
    } else if (cJSON_IsObject(j)) {
        snprintf(buf, size, "an object");
    } else if (cJSON_IsArray(j)) {
        snprintf(buf, size, "an array");
    } else if (cJSON_IsNull(j)) {
        snprintf(buf, size, "null");
    } else if (cJSON_IsBool(j)) {
        snprintf(buf, size, "%s", cJSON_IsTrue(j) ? "true" : "false");
    } else {
        snprintf(buf, size, "something else");
    }
    return buf;
}
