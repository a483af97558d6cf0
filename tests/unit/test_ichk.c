/*
 * The index's checks (trace/cache/ichk.h): the content checks read the mapped arrays
 * through the file, a chunk at a time, and say what the mapping itself says: the same
 * counts, kinds and times, the same damage found, past a chunk's end and with columns far
 * apart; the payload's checksum read beside the caller is the one the writer's chains
 * give, and a file cut short does not check.
 */
#include "trace/cache/ichk.h"

#include "test_tmpdir.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { NT = 5, NS = 40, NSITE = 3, TRACE_SIZE = 1 << 20 };

/* n events over NT tracks, their kinds by track, some in range of everything. */
static void events(struct trace_event *ev, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        ev[i] = (struct trace_event){.start = 1000 + i * 3,
                                     .end = 1000 + i * 3 + 1 + i % 7,
                                     .track = (uint32_t)(i % NT),
                                     .op = (uint32_t)(1 + i % (NS - 1)),
                                     .op_kind = (uint8_t)((i % NT) % TRACE_KIND_COUNT),
                                     .details = i % TRACE_SIZE,
                                     .site = TRACE_NO_SITE};
}

/* bytes written to dir/name and mapped (read-only); *fd open on it. */
static void *map_file(const char *name, const void *bytes, size_t n, int *fd)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
    *fd = open(path, O_RDONLY);
    cr_assert_geq(*fd, 0);
    void *p = mmap(NULL, n, PROT_READ, MAP_PRIVATE, *fd, 0);
    cr_assert_neq(p, MAP_FAILED);
    return p;
}

struct seen {
    bool ok;
    uint64_t tmin, tmax, count[NT];
    uint8_t kinds[NT];
};

static struct seen check(int fd, const void *map, const struct trace_event *ev, uint64_t n)
{
    struct seen s = {0};
    struct trace_ichk_rd rd = {fd, map, NULL, 0};
    s.ok = trace_ichk_events(&rd, ev, n, NT, NS, NSITE, TRACE_SIZE, &s.tmin, &s.tmax, s.count,
                             s.kinds);
    free(rd.buf);
    return s;
}

/* Read through the file or from the mapping (fd -1), the events say the same, over more
 * than one chunk; damage in the second chunk is found either way. */
Test(ichk, events_read_through_the_file_say_what_the_mapping_says, .init = mkdir_tmp,
     .fini = rm_tmp)
{
    uint64_t n = (1 << 16) + 4099; /* one chunk and a part */
    struct trace_event *ev = calloc(n, sizeof(*ev));
    events(ev, n);
    int fd;
    const struct trace_event *m = map_file("ev", ev, n * sizeof(*ev), &fd);
    struct seen a = check(fd, m, m, n), b = check(-1, m, m, n);
    cr_assert(a.ok && b.ok);
    cr_assert_eq(memcmp(&a, &b, sizeof(a)), 0);
    cr_assert_eq(a.tmin, 1000);
    cr_assert_eq(a.tmax, ev[n - 1].end > ev[n - 2].end ? ev[n - 1].end : ev[n - 2].end);
    uint64_t total = 0;
    for (int t = 0; t < NT; t++) {
        total += a.count[t];
        cr_assert_eq(a.kinds[t], trace_kind_bit((unsigned)t % TRACE_KIND_COUNT), "track %d", t);
    }
    cr_assert_eq(total, n);
    munmap((void *)m, n * sizeof(*ev));
    close(fd);
    /* a track out of range in the second chunk; then an end before its start */
    for (int k = 0; k < 2; k++) {
        struct trace_event *e = &ev[(1 << 16) + 17];
        struct trace_event keep = *e;
        if (k == 0)
            e->track = NT;
        else
            e->end = e->start - 1;
        m = map_file(k ? "bad1" : "bad0", ev, n * sizeof(*ev), &fd);
        cr_assert(!check(fd, m, m, n).ok, "damage %d read through the file", k);
        cr_assert(!check(-1, m, m, n).ok, "damage %d read from the mapping", k);
        munmap((void *)m, n * sizeof(*ev));
        close(fd);
        *e = keep;
    }
    free(ev);
}

/* Column offsets and columns read through the file, each chunk's columns read at once when
 * they lie close together (step 16: 1 MB for a chunk) and looked at in the mapping when
 * they lie far apart (step 320: 20 MB); whole or with the last column running one byte
 * past the columns' end, which is found either way. */
Test(ichk, columns_near_and_far_apart_are_checked_alike, .init = mkdir_tmp, .fini = rm_tmp)
{
    uint64_t n = (1 << 16) + 10, count[1] = {0};
    static const size_t steps[] = {16, 320};
    for (int far = 0; far < 2; far++) {
        size_t step = steps[far], ncol = (size_t)n * step;
        size_t size = n * sizeof(uint64_t) + ncol;
        unsigned char *bytes = calloc(size, 1);
        uint64_t *off = (uint64_t *)bytes;
        uint8_t *col = bytes + n * sizeof(uint64_t);
        for (uint64_t i = 0; i < n; i++) {
            off[i] = i % 5 == 4 ? UINT64_MAX : i * step;
            if (off[i] != UINT64_MAX)
                col[off[i]] = (uint8_t)(step - 1); /* its length: it fits */
        }
        off[n - 1] = ncol - 3; /* the last column, near the end */
        col[ncol - 3] = 2;
        for (int bad = 0; bad < 2; bad++) {
            col[ncol - 3] = bad ? 3 : 2; /* 3 bytes from ncol - 3: one past the end */
            int fd;
            char name[32];
            snprintf(name, sizeof(name), "cols%d%d", far, bad);
            const unsigned char *m = map_file(name, bytes, size, &fd);
            struct trace_model_lent a = {.nev = n,
                                         .col_off = (const uint64_t *)m,
                                         .col = m + n * sizeof(uint64_t),
                                         .ncol = ncol};
            for (int way = 0; way < 2; way++) {
                struct trace_ichk_rd rd = {way ? -1 : fd, m, NULL, 0}, rc = rd;
                bool ok = trace_ichk_lent(&rd, &rc, &a, 0, count);
                free(rd.buf);
                free(rc.buf);
                cr_assert_eq(ok, !bad, "%s columns, %s, %s", far ? "far" : "close",
                             bad ? "damaged" : "whole", way ? "from the mapping" : "read");
            }
            munmap((void *)m, size);
            close(fd);
        }
        free(bytes);
    }
}

/* The checksum read beside the caller is the one the writer's chains make of the same
 * bytes; a byte changed, or the file shorter than said, does not check. */
Test(ichk, the_payload_checked_beside_is_the_written_one, .init = mkdir_tmp, .fini = rm_tmp)
{
    size_t skip = 100, n = 5 * TRACE_ICHK_BLOCK + 12345;
    unsigned char *bytes = malloc(skip + n);
    for (size_t i = 0; i < skip + n; i++)
        bytes[i] = (unsigned char)(i * 2654435761u >> 13);
    /* as the writer chains it: block b into chain b % 2 */
    uint64_t chain[2] = {TRACE_ICHK_SEED, TRACE_ICHK_SEED};
    for (size_t b = 0, at = 0; at < n; b++, at += TRACE_ICHK_BLOCK) {
        size_t len = n - at < TRACE_ICHK_BLOCK ? n - at : TRACE_ICHK_BLOCK;
        chain[b % 2] = trace_ichk_wide(bytes + skip + at, len, chain[b % 2]);
    }
    uint64_t want = trace_ichk_fold(chain), got;
    int fd;
    void *m = map_file("payload", bytes, skip + n, &fd);
    struct trace_ichk_beside c;
    trace_ichk_start(&c, fd, skip, n);
    cr_assert(trace_ichk_end(&c, want));
    cr_assert(trace_ichk_payload(fd, skip, n, &got));
    cr_assert_eq(got, want);
    trace_ichk_start(&c, fd, skip, n + 1); /* one byte more than the file has */
    cr_assert(!trace_ichk_end(&c, want));
    cr_assert(!trace_ichk_payload(fd, skip, n + 1, &got));
    munmap(m, skip + n);
    close(fd);
    bytes[skip + 3 * TRACE_ICHK_BLOCK + 7] ^= 1;
    m = map_file("damaged", bytes, skip + n, &fd);
    trace_ichk_start(&c, fd, skip, n);
    cr_assert(!trace_ichk_end(&c, want));
    munmap(m, skip + n);
    close(fd);
    free(bytes);
}
