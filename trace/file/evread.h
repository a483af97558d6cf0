/*
 * A direct reader for the exact shape npuscope's writer gives an ENGINE_EVENT of
 * timeline_events (trace/file/writer.c): its fixed fields in the writer's order, with no
 * whitespace, plain strings and integers, read straight from the bytes without building a
 * cJSON node for each. Its details are read as text too, for the members the loader reads
 * (trace_opinfo_decode_text's and those of struct trace_evread's found); details of any
 * other shape are parsed into a tree (by trace/file/fastjson.h). Any
 * deviation (another order, an unknown or repeated member, whitespace, an escape, a number
 * that is not a plain integer, a value of another type, the end of the bytes) makes it give
 * up, and the loader reads the element through cJSON's tree as before: every message,
 * position and model is the tree path's.
 */
#ifndef TRACE_EVREAD_H
#define TRACE_EVREAD_H

#include "trace/analysis/opinfo.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    TRACE_EVREAD_DEPS = 32,       /* most dependency_ids read */
    TRACE_EVREAD_TEXT = 1024,     /* bytes of the strings' copies */
    TRACE_EVREAD_DETAILS = 65536, /* most bytes of details read as text */
};

/* The members of details the loader reads beside the op columns: the call site, and a DMA
 * event's DRAM traffic (at the top, the first four also under replay). */
enum trace_evread_key {
    TRACE_EVK_SRC,
    TRACE_EVK_SRC_FUNC,
    TRACE_EVK_DIRECTION,
    TRACE_EVK_ROLE,
    TRACE_EVK_SRC_SPACE,
    TRACE_EVK_DST_SPACE,
    TRACE_EVK_BYTES,
    TRACE_EVK_NBYTES,
    TRACE_EVK_REPLAY,
    TRACE_EVK_TOP,                           /* the members at the top, then: */
    TRACE_EVK_REP_DIRECTION = TRACE_EVK_TOP, /* under replay: direction, */
    TRACE_EVK_REP_END = TRACE_EVK_TOP + TRACE_EVK_BYTES - TRACE_EVK_DIRECTION /* ... dst_space */
};

/*
 * The members of the object details (may be NULL: none) trace_evread_key names into found
 * (TRACE_EVK_REP_END entries; NULL: absent): the first of each at the top, as
 * trace_fastjson_members finds them; under the first replay only when one of direction,
 * tensor_role, src_space and dst_space is not at the top. Without dram (not a DMA event),
 * only src and src_func are looked for.
 */
void trace_evread_find(const cJSON *details, bool dram, const cJSON **found);

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
    /* details, NULL: absent or null, or read as text (dtext_ok); else an object (cJSON's
     * tree of it, when its text is not of the writer's shape: see below) */
    cJSON *details;
    /* With dtext_ok, details were read without a tree: what trace_opinfo_decode_text reads
     * of them in dtext, and in node the members found names (each a node of its own: a
     * string, a number, true, false or null; found[TRACE_EVK_REPLAY] is then NULL). Their
     * text is of the shape struct trace_opinfo_text says, within TRACE_EVREAD_DETAILS
     * bytes, and the members found names are no arrays or objects. */
    bool dtext_ok;
    struct trace_opinfo_text dtext;
    cJSON node[TRACE_EVK_REP_END];
    /* trace_evread_find of details, done where details was read (on the thread that
     * parses ahead, while its text is in that core's cache) */
    const cJSON *found[TRACE_EVK_REP_END];
    /* the op columns' decode of details (trace_opinfo_decode_pre), done there too when
     * asked, for the op kind kind (the engine's, or op_kind's); kind_ok false: not done (not
     * asked, or an op_kind or engine the loader refuses) */
    bool kind_ok;
    enum trace_op_kind kind;
    struct trace_opinfo_pre opinfo;
    /* for the loader's caches: the lengths of layer, tile, op and component (0: NULL); with
     * hashed (done there too, when asked), their trace_evread_hash (seed TRACE_EVREAD_SEED),
     * and with site_ok, the call site's key's: details.src (a string) then details.src_func
     * (a non-empty string, or ""), site_hash chaining the second hash on the first */
    uint32_t len[4], hash[4];
    bool hashed, site_ok;
    uint32_t site_len[2], site_hash;
    char text[TRACE_EVREAD_TEXT];
};

enum { TRACE_EVREAD_SEED = 2166136261u };

/* A hash of s[0, n) from h: what the loader's caches of strings and call sites key by (also
 * computed ahead, struct trace_evread). It samples the string (its length, its first, middle
 * and last eight bytes), so strings that differ only elsewhere share a hash: a cache then
 * misses more, never answers wrong. */
uint32_t trace_evread_hash(const char *s, size_t n, uint32_t h);

/*
 * The ENGINE_EVENT of the canonical shape at p[0, n) into *ev, with *len its length in
 * bytes; false when the bytes are anything else (then what was parsed of details is left to
 * the arena's reset, as trace_fastjson_parse leaves it). With ahead (the thread that parses
 * ahead has time to spare), its op columns are decoded too (ev->opinfo) and its strings
 * hashed; without, kind_ok, hashed and site_ok are false (the loader does it).
 */
bool trace_evread_engine(const char *p, size_t n, bool ahead, size_t *len, struct trace_evread *ev);

#endif
