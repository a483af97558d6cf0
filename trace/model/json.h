/*
 * JSON helpers shared by the trace modules: cJSON trees to value trees (details, the
 * top-level blocks of a loaded trace) and back, and JSON values described for the
 * validation report. cJSON keeps every number as a double, so a whole number comes back
 * as an integer (FORMAT.md: "Numbers").
 */
#ifndef TRACE_JSON_H
#define TRACE_JSON_H

#include "sim/data/value.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A value tree for j (NULL j gives NULL). Numbers that are whole and within int64 become
 * SIM_V_INT, others SIM_V_FLOAT. The caller frees the result. */
struct sim_value *trace_json_to_value(const cJSON *j);

/* Whether j is there and of cJSON type type (cJSON_String, cJSON_NULL, ...): cJSON_IsString
 * and the like inline (a loader asks it for each event's call site and DRAM fields, where
 * the library's calls were some 2% of a load: perf, 10 M events). */
static inline bool trace_json_is(const cJSON *j, int type)
{
    return j && (j->type & 0xFF) == type;
}

/* True when j is a number holding a whole value in [0, TRACE_MAX_INT]; stores it. */
bool trace_json_uint(const cJSON *j, uint64_t *out);

/*
 * A short description of a JSON value for a message: numbers as written (-5, 1.5,
 * 1e+400 as "inf"), strings quoted and cut at 40 bytes, "an object", "an array", "null",
 * "true", "false". Returns buf.
 */
const char *trace_json_describe(const cJSON *j, char *buf, size_t size);

#endif
