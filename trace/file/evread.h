/*
 * A direct reader for the exact shape npuscope's writer gives an ENGINE_EVENT of
 * timeline_events (trace/file/writer.c): its fixed fields in the writer's order, with no
 * whitespace, plain strings and integers, read straight from the bytes without building a
 * cJSON node for each (only details is parsed into a tree, by trace/file/fastjson.h). Any
 * deviation (another order, an unknown or repeated member, whitespace, an escape, a number
 * that is not a plain integer, a value of another type, the end of the bytes) makes it give
 * up, and the loader reads the element through cJSON's tree as before: every message,
 * position and model is the tree path's.
 */
#ifndef TRACE_EVREAD_H
#define TRACE_EVREAD_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    TRACE_EVREAD_DEPS = 32,   /* most dependency_ids read */
    TRACE_EVREAD_TEXT = 1024, /* bytes of the strings' copies */
};

/* The fields of one ENGINE_EVENT as written. Strings are NUL-terminated copies in text. */
struct trace_evread {
    const char *engine;    /* the engine's name, unchecked */
    int64_t engine_id;     /* at most 15 digits */
    bool has_cmdq;         /* false: cmdq_id is null */
    int64_t cmdq_id;       /* at most 15 digits */
    const char *layer;     /* NULL: null */
    const char *tile;      /* NULL: null */
    const char *op;        /* never null */
    uint64_t start, end;   /* start_cycle and end_cycle, at most 15 digits each */
    const char *component; /* NULL: absent */
    const char *op_kind;   /* NULL: absent; unchecked */
    size_t ndeps;          /* dependency_ids (absent: 0) */
    uint64_t deps[TRACE_EVREAD_DEPS];
    cJSON *details; /* NULL: absent or null; else an object (cJSON's tree of it) */
    char text[TRACE_EVREAD_TEXT];
};

/*
 * The ENGINE_EVENT of the canonical shape at p[0, n) into *ev, with *len its length in
 * bytes; false when the bytes are anything else (then what was parsed of details is left to
 * the arena's reset, as trace_fastjson_parse leaves it).
 */
bool trace_evread_engine(const char *p, size_t n, size_t *len, struct trace_evread *ev);

#endif
