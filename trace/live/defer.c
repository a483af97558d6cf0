/*
 * The entries a live feed keeps while its model is held still (see defer.h): a list of blocks,
 * each entry a header (its kind and size, a multiple of 8) followed by its fixed part and
 * the bytes it copied.
 */
#include "trace/live/defer.h"

#include "sim/util/xalloc.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCK = 1 << 20 };
enum kind { OP_START, OP_END, SPAN, TRAFFIC };

struct block {
    struct block *next;
    size_t used, cap;
    alignas(8) unsigned char data[];
};

struct trace_defer {
    struct block *head, *tail; /* the oldest block (read from rpos), the newest */
    size_t rpos;
    struct block *spare; /* one emptied block kept for the next entries */
    size_t n, bytes;
};

struct hdr {
    uint32_t kind, size;
    double at_ns; /* the run's time when it was heard */
};

/* An op record's copy: its pointers to what the entry copied are set again on the way out;
 * then its dependencies, packed params and the three strings of what it moves. */
struct op_ent {
    struct sim_op_record rec;
    uint32_t slen[3]; /* UINT32_MAX: NULL */
};

struct span_ent {
    struct trace_defer_span s;
    uint32_t oplen;
};

struct traffic_ent {
    uint64_t nbytes, c0, c1;
    uint32_t res;
    bool write;
};

struct trace_defer *trace_defer_new(void)
{
    return sim_xcalloc(1, sizeof(struct trace_defer));
}

void trace_defer_free(struct trace_defer *q)
{
    if (!q)
        return;
    for (struct block *b = q->head, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(q->spare);
    free(q);
}

size_t trace_defer_count(const struct trace_defer *q)
{
    return q->n;
}

size_t trace_defer_bytes(const struct trace_defer *q)
{
    return q->bytes;
}

static size_t round8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* Room for an entry of size bytes (a multiple of 8) at the end: its first byte. */
static unsigned char *room(struct trace_defer *q, size_t size)
{
    struct block *b = q->tail;
    if (!b || b->cap - b->used < size) {
        size_t cap = size > BLOCK ? size : BLOCK;
        if (q->spare && q->spare->cap >= cap) {
            b = q->spare;
            q->spare = NULL;
        } else {
            b = sim_xmalloc(sizeof(*b) + cap);
            b->cap = cap;
            q->bytes += sizeof(*b) + cap;
        }
        b->next = NULL;
        b->used = 0;
        if (q->tail)
            q->tail->next = b;
        else
            q->head = b, q->rpos = 0;
        q->tail = b;
    }
    unsigned char *p = b->data + b->used;
    b->used += size;
    q->n++;
    return p;
}

static size_t str_len(const char *s)
{
    return s ? strlen(s) : 0;
}

void trace_defer_op(struct trace_defer *q, double at_ns, bool end, const struct sim_op_record *rec)
{
    const char *s[3] = {rec->mem.src_space, rec->mem.dst_space, rec->mem.role};
    size_t deps = rec->n_dependency_ids * sizeof(*rec->dependency_ids);
    size_t size = sizeof(struct hdr) + sizeof(struct op_ent) + deps + rec->packed_len;
    for (int k = 0; k < 3; k++)
        size += s[k] ? str_len(s[k]) + 1 : 0;
    size = round8(size);
    unsigned char *p = room(q, size);
    struct hdr h = {end ? OP_END : OP_START, (uint32_t)size, at_ns};
    memcpy(p, &h, sizeof(h));
    struct op_ent e = {.rec = *rec};
    e.rec.params = NULL;
    e.rec.note.replay = NULL;
    unsigned char *v = p + sizeof(h) + sizeof(e);
    if (deps)
        memcpy(v, rec->dependency_ids, deps);
    v += deps;
    if (rec->packed_len)
        memcpy(v, rec->packed, rec->packed_len);
    v += rec->packed_len;
    for (int k = 0; k < 3; k++) {
        e.slen[k] = s[k] ? (uint32_t)str_len(s[k]) : UINT32_MAX;
        if (s[k]) {
            memcpy(v, s[k], e.slen[k] + 1);
            v += e.slen[k] + 1;
        }
    }
    memcpy(p + sizeof(h), &e, sizeof(e));
}

void trace_defer_span(struct trace_defer *q, double at_ns, const struct trace_defer_span *s)
{
    size_t oplen = str_len(s->op);
    size_t size = round8(sizeof(struct hdr) + sizeof(struct span_ent) + oplen + 1 + s->packed_len);
    unsigned char *p = room(q, size);
    struct hdr h = {SPAN, (uint32_t)size, at_ns};
    struct span_ent e = {.s = *s, .oplen = (uint32_t)oplen};
    memcpy(p, &h, sizeof(h));
    memcpy(p + sizeof(h), &e, sizeof(e));
    unsigned char *v = p + sizeof(h) + sizeof(e);
    memcpy(v, s->op ? s->op : "", oplen + 1);
    if (s->packed_len)
        memcpy(v + oplen + 1, s->packed, s->packed_len);
}

void trace_defer_traffic(struct trace_defer *q, double at_ns, uint32_t res, bool write,
                         uint64_t nbytes, uint64_t c0, uint64_t c1)
{
    size_t size = round8(sizeof(struct hdr) + sizeof(struct traffic_ent));
    unsigned char *p = room(q, size);
    struct hdr h = {TRAFFIC, (uint32_t)size, at_ns};
    struct traffic_ent e = {nbytes, c0, c1, res, write};
    memcpy(p, &h, sizeof(h));
    memcpy(p + sizeof(h), &e, sizeof(e));
}

/* Hand the entry at p back to sink. */
static void replay_one(const unsigned char *p, const struct trace_defer_sink *sink)
{
    struct hdr h;
    memcpy(&h, p, sizeof(h));
    const unsigned char *v = p + sizeof(h);
    sink->at(sink->ctx, h.at_ns);
    if (h.kind == TRAFFIC) {
        struct traffic_ent e;
        memcpy(&e, v, sizeof(e));
        sink->traffic(sink->ctx, e.res, e.write, e.nbytes, e.c0, e.c1);
    } else if (h.kind == SPAN) {
        struct span_ent e;
        memcpy(&e, v, sizeof(e));
        v += sizeof(e);
        e.s.op = (const char *)v;
        e.s.packed = e.s.packed_len ? v + e.oplen + 1 : NULL;
        sink->span(sink->ctx, &e.s);
    } else {
        struct op_ent e;
        memcpy(&e, v, sizeof(e));
        v += sizeof(e);
        size_t deps = e.rec.n_dependency_ids * sizeof(*e.rec.dependency_ids);
        e.rec.dependency_ids = deps ? (int64_t *)(void *)v : NULL; /* (8-aligned: see room) */
        v += deps;
        e.rec.packed = e.rec.packed_len ? v : NULL;
        v += e.rec.packed_len;
        const char **s[3] = {&e.rec.mem.src_space, &e.rec.mem.dst_space, &e.rec.mem.role};
        for (int k = 0; k < 3; k++) {
            *s[k] = e.slen[k] == UINT32_MAX ? NULL : (const char *)v;
            v += e.slen[k] == UINT32_MAX ? 0 : e.slen[k] + 1;
        }
        sink->op(sink->ctx, h.kind == OP_END, &e.rec);
    }
}

size_t trace_defer_replay(struct trace_defer *q, const struct trace_defer_sink *sink, size_t max)
{
    size_t done = 0;
    while (q->head && done < max) {
        struct block *b = q->head;
        if (q->rpos < b->used) {
            const unsigned char *p = b->data + q->rpos;
            struct hdr h;
            memcpy(&h, p, sizeof(h));
            q->rpos += h.size;
            q->n--;
            done++;
            replay_one(p, sink);
            continue;
        }
        q->head = b->next; /* the block is read: kept for the next entries, or freed */
        q->rpos = 0;
        if (!q->head)
            q->tail = NULL;
        if (!q->spare && b->cap == BLOCK) {
            q->spare = b;
        } else {
            q->bytes -= sizeof(*b) + b->cap;
            free(b);
        }
    }
    if (q->head && q->rpos == q->head->used && !q->head->next) { /* all read: start over */
        q->head->used = 0;
        q->rpos = 0;
    }
    return done;
}
