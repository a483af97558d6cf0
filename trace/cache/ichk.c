/* The checks of a binary index (see ichk.h). */
#include "trace/cache/ichk.h"

#include "sim/util/fileio.h"
#include "sim/util/xalloc.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

uint64_t trace_ichk_block(const unsigned char *p, size_t n, uint64_t h)
{
    h ^= (uint64_t)n * 0x9E3779B97F4A7C15ull;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

/* A payload block's checksum: four lanes of trace_ichk_block's step over 32 bytes at a time (the
 * lanes do not wait on each other, so it runs at several bytes a cycle: it reads the whole
 * index on every open), folded with the tail. */
uint64_t trace_ichk_wide(const unsigned char *p, size_t n, uint64_t h)
{
    uint64_t l[4] = {h ^ 0x243F6A8885A308D3ull, h ^ 0x13198A2E03707344ull,
                     h ^ 0xA4093822299F31D0ull, h ^ 0x082EFA98EC4E6C89ull};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) {
            uint64_t w;
            memcpy(&w, p + i + 8 * k, 8);
            l[k] = (l[k] ^ w) * 0xff51afd7ed558ccdull;
            l[k] ^= l[k] >> 29;
        }
    for (int k = 0; k < 4; k++)
        h = trace_ichk_block((const unsigned char *)&l[k], 8, h);
    return trace_ichk_block(p + i, n - i, h);
}

/* Give back the whole pages inside [p, p + n) of a mapping (read again from the page cache
 * when used). */
static void drop(const void *p, size_t n)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = ((uintptr_t)p + page - 1) / page * page, b = ((uintptr_t)p + n) / page * page;
    if (b > a)
        madvise((char *)p + (a - (uintptr_t)p), b - a, MADV_DONTNEED);
}

uint64_t trace_ichk_fold(const uint64_t chain[2])
{
    return trace_ichk_block((const unsigned char *)&chain[1], sizeof(chain[1]), chain[0]);
}

/* A chain: the blocks k, k + 2, ... of the n payload bytes at offset skip of the file fd,
 * each read into a buffer of the chain's own. Read, not mapped: under a mapping each page
 * of the index would be mapped in, then given back, only to be checked (a 900 MB index:
 * 0.5 s through a fresh mapping, 0.2 s read into a buffer, hash included; the model maps
 * what it uses afterwards). */
static void *chain_run(void *arg)
{
    struct trace_ichk_chain *j = arg;
    j->h = TRACE_ICHK_SEED;
    unsigned char *buf = sim_xmalloc(TRACE_ICHK_BLOCK);
    for (size_t off = j->k * TRACE_ICHK_BLOCK; off < j->n && !j->bad;
         off += 2 * (size_t)TRACE_ICHK_BLOCK) {
        size_t len = j->n - off < TRACE_ICHK_BLOCK ? j->n - off : TRACE_ICHK_BLOCK;
        j->bad = !sim_pread_all(j->fd, buf, len, j->skip + off);
        j->h = trace_ichk_wide(buf, len, j->h);
    }
    free(buf);
    return NULL;
}

/* (the odd blocks' chain on a second thread past a few blocks: a 900 MB index took 0.27 s
 * to check on one) */
bool trace_ichk_payload(int fd, size_t skip, size_t n, uint64_t *out)
{
    struct trace_ichk_chain j[2] = {{fd, skip, n, 0, 0, false, 0}, {fd, skip, n, 1, 0, false, 0}};
    bool two =
        n >= 4 * (size_t)TRACE_ICHK_BLOCK && pthread_create(&j[1].th, NULL, chain_run, &j[1]) == 0;
    chain_run(&j[0]);
    if (two)
        pthread_join(j[1].th, NULL);
    else
        chain_run(&j[1]);
    uint64_t chain[2] = {j[0].h, j[1].h};
    *out = trace_ichk_fold(chain);
    return !j[0].bad && !j[1].bad;
}

/* Both chains on a thread of their own while the caller rebuilds the model from the
 * mapping, which holds together whatever it reads (every index and count is checked); a
 * model rebuilt from an index that then does not check is dropped unused. */
static void *check_run(void *arg)
{
    struct trace_ichk_beside *c = arg;
    chain_run(&c->j[0]);
    chain_run(&c->j[1]);
    return NULL;
}

void trace_ichk_start(struct trace_ichk_beside *c, int fd, size_t skip, size_t n)
{
    *c = (struct trace_ichk_beside){
        .j = {{fd, skip, n, 0, 0, false, 0}, {fd, skip, n, 1, 0, false, 0}}};
    c->started = pthread_create(&c->th, NULL, check_run, c) == 0;
}

bool trace_ichk_end(struct trace_ichk_beside *c, uint64_t want)
{
    if (c->started)
        pthread_join(c->th, NULL);
    else
        check_run(c);
    uint64_t chain[2] = {c->j[0].h, c->j[1].h};
    return !c->j[0].bad && !c->j[1].bad && trace_ichk_fold(chain) == want;
}

enum {
    CHECK_CHUNK = 1 << 16,  /* items checked between two page releases */
    CHECK_SPAN = 16u << 20, /* most bytes of columns read at once for a chunk's check */
};

/* The checks' reads: the bytes of the mapping at p copied into a buffer of their own
 * (grown to fit) through the file, rather than mapped in page by page only to be looked at
 * once (on reopen, the checks' pass over the events was most of the time before the first
 * frame); the mapping itself when the read fails (its pages are then given back). */

static const void *check_read(struct trace_ichk_rd *c, const void *p, size_t n)
{
    if (c->fd < 0 || !n)
        return p;
    if (n > c->cap) {
        free(c->buf);
        c->buf = sim_xmalloc(n);
        c->cap = n;
    }
    uint64_t at = (uint64_t)((const char *)p - (const char *)c->map);
    return sim_pread_all(c->fd, c->buf, n, at) ? c->buf : p;
}

/* Done with the n bytes at p that check_read gave as q: given back when they are the
 * mapping's own pages. */
static void check_done(const void *p, const void *q, size_t n)
{
    if (p == q)
        drop(p, n);
}

bool trace_ichk_events(struct trace_ichk_rd *rd, const struct trace_event *ev, uint64_t ne,
                       uint32_t nt, uint32_t ns, uint32_t nsite, uint64_t trace_size,
                       uint64_t *tmin, uint64_t *tmax, uint64_t *count, uint8_t *kinds)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    bool bad = false;
    for (uint64_t c = 0; c < ne && !bad; c += CHECK_CHUNK) {
        uint64_t to = ne - c < CHECK_CHUNK ? ne : c + CHECK_CHUNK;
        size_t len = (to - c) * sizeof(*ev);
        const struct trace_event *v = check_read(rd, ev + c, len);
        for (uint64_t i = c; i < to; i++) {
            const struct trace_event *e = &v[i - c];
            bool b = e->track >= nt || e->op >= ns || e->layer >= ns || e->tile >= ns ||
                     e->op_kind >= TRACE_KIND_COUNT || e->end < e->start ||
                     e->details >= trace_size || (e->flags & ~TRACE_EV_TRANSFER) ||
                     (e->site != TRACE_NO_SITE && e->site >= nsite);
            bad |= b;
            count[b ? 0 : e->track]++;
            kinds[b ? 0 : e->track] |= trace_kind_bit(e->op_kind);
            lo = e->start < lo ? e->start : lo;
            hi = e->end > hi ? e->end : hi;
        }
        check_done(ev + c, v, len);
    }
    *tmin = lo, *tmax = hi;
    return !bad;
}

bool trace_ichk_lent(struct trace_ichk_rd *rd, struct trace_ichk_rd *rc,
                     const struct trace_model_lent *a, uint32_t nt, const uint64_t *count)
{
    bool bad = false;
    for (uint64_t c = 0; a->col_off && c < a->nev && !bad; c += CHECK_CHUNK) {
        uint64_t to = a->nev - c < CHECK_CHUNK ? a->nev : c + CHECK_CHUNK;
        size_t len = (to - c) * sizeof(uint64_t);
        const uint64_t *off = check_read(rd, a->col_off + c, len);
        /* the chunk's columns, read at once when they lie close together (as written) */
        uint64_t lo = UINT64_MAX, hi = 0;
        for (uint64_t i = 0; i < to - c; i++)
            if (off[i] < a->ncol) {
                lo = off[i] < lo ? off[i] : lo;
                hi = off[i] > hi ? off[i] : hi;
            }
        const uint8_t *col = a->col; /* col[o] at col[o - base] */
        uint64_t base = 0;
        if (lo <= hi && hi - lo < CHECK_SPAN) {
            const uint8_t *q = check_read(rc, a->col + lo, (size_t)(hi - lo + 1));
            if (q != a->col + lo)
                col = q, base = lo;
        }
        for (uint64_t i = 0; i < to - c; i++) {
            uint64_t o = off[i];
            bad |= o != UINT64_MAX && (o >= a->ncol || col[o - base] >= a->ncol - o);
        }
        check_done(a->col_off + c, off, len);
    }
    if (a->col)
        drop(a->col, a->ncol);
    for (size_t k = 0; k < a->nxf; k++)
        bad |= a->xf[k].event >= a->nev;
    for (size_t k = 0; k < a->ndep; k++)
        bad |= a->dep_ev[k] >= a->nev || a->dep_on[k] >= a->nev ||
               (k && a->dep_ev[k] < a->dep_ev[k - 1]);
    for (uint32_t t = 0; t < nt && !bad; t++) {
        bad |= a->nidx[t] != count[t];
        for (size_t k = 0; k < a->nidx[t]; k++)
            bad |= a->idx[t][k] >= a->nev;
        drop(a->idx[t], a->nidx[t] * sizeof(uint32_t));
    }
    return !bad;
}
