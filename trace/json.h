/*
 * JSON helpers shared by the trace modules: cJSON trees to value trees (details, the
 * top-level blocks of a loaded trace) and back. cJSON keeps every number as a double, so a
 * whole number comes back as an integer (FORMAT.md: "Numbers").
 */
#ifndef TRACE_JSON_H
#define TRACE_JSON_H

#include "sim/value.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

/* A value tree for j (NULL j gives NULL). Numbers that are whole and within int64 become
 * SIM_V_INT, others SIM_V_FLOAT. The caller frees the result. */
struct sim_value *trace_json_to_value(const cJSON *j);

/* True when j is a number holding a whole value in [0, TRACE_MAX_INT]; stores it. */
bool trace_json_uint(const cJSON *j, uint64_t *out);

#endif
