/*
 * A fast parser for the common shape of a trace's elements (trace/file/loader.c), in front
 * of cJSON: it builds exactly the tree cJSON would (the same nodes, strings and numbers,
 * allocated through cJSON's hooks), but reads integers and short decimals without strtod,
 * and null/true/false without three string compares per value. Anything it does not
 * handle (an escape, a control byte in a string, a number that is long or has an
 * exponent, deep nesting, bad JSON, memory refused) makes it give up: the caller then
 * parses the same bytes with cJSON, so every answer, message and position stays cJSON's.
 */
#ifndef TRACE_FASTJSON_H
#define TRACE_FASTJSON_H

#include <cjson/cJSON.h>
#include <stddef.h>

struct trace_arena;

/*
 * The value at p[0, n) (after whitespace), as cJSON_ParseWithLengthOpts(p, n, end, 0) would
 * parse it, with *end past it; NULL when the fast parser gives up (what it allocated is
 * freed through cJSON's hooks: under the load's arena, trace/file/arena.h, it stays until the
 * arena's reset, and the caller marks the arena before cJSON parses the value again).
 */
cJSON *trace_fastjson_parse(const char *p, size_t n, const char **end);

/* The value at p[0, n) parsed fast, or else by cJSON (the arena a, the calling thread's, or
 * NULL: none, marked first so that cJSON's attempt has the whole limit); NULL when cJSON
 * refuses it too (cJSON_ParseWithLengthOpts's answer). */
cJSON *trace_fastjson_parse_any(const char *p, size_t n, const char **end, struct trace_arena *a);

/* The first member of object o named keys[k], for k in [0, n), into out[k] (left as it is
 * when there is none; out[k] already set is kept): what cJSON_GetObjectItemCaseSensitive
 * finds for each name (none past a member without a name: an array's elements), in one
 * pass over o. o may be NULL. */
void trace_fastjson_members(const cJSON *o, const char *const *keys, int n, const cJSON **out);

#endif
