/*
 * The load's second thread (pparse.h): a worker parses batches of array elements into a
 * ring of NBUF batch arenas; the loading thread takes the elements in order and hands a
 * batch back when it has taken all of it. A side that has to wait sleeps until half the
 * ring is ready for it, not one batch: on a busy machine each wake-up costs a time slice.
 * The worker also decodes the op columns of the batches it makes while it is ahead.
 */
#include "trace/file/pparse.h"

#include "sim/util/num.h"
#include "sim/util/xalloc.h"
#include "trace/file/arena.h"
#include "trace/file/evread.h"
#include "trace/file/fastjson.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    NBUF = 8,                 /* batches in flight */
    BATCH_ELEMS = 128,        /* elements in a batch at most */
    BATCH_BYTES = 256u << 10, /* parsed memory after which a batch is full */
};

struct batch {
    struct trace_arena arena;
    cJSON *j[BATCH_ELEMS];
    struct trace_evread *ev[BATCH_ELEMS]; /* or NULL: j */
    size_t off[BATCH_ELEMS], end[BATCH_ELEMS];
    size_t n;
    bool last; /* the worker stopped after this batch */
};

struct trace_pparse {
    const char *p;
    size_t n, at;
    bool direct; /* ENGINE_EVENTs are read by trace/file/evread.h where they can be */
    int opinfo;  /* NPUSCOPE_LOAD_OPINFO (pparse.h): 0, 1, 2, or -1: while ahead; 0 when
                  * not asked */
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct batch b[NBUF];
    pthread_cond_t cv_taker;
    size_t made, given; /* batches the worker finished; batches the taker gave back (mu) */
    bool stop;          /* the taker wants the worker gone (mu) */
    bool done;          /* the worker made its last batch (mu) */
    bool worker_waits, taker_waits; /* (mu) */
    /* the taker's own */
    struct batch *cur; /* the batch being taken, or NULL */
    size_t pos;
    bool ended; /* no more elements from the worker */
};

static size_t skip_ws(const struct trace_pparse *pp, size_t i)
{
    while (i < pp->n) {
        char c = pp->p[i];
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
            break;
        i++;
    }
    return i;
}

/* Fill batch b from offset *ip, with the ENGINE_EVENTs' op columns decoded when opinfo;
 * false when the worker must stop after it. */
static bool fill(struct trace_pparse *pp, struct batch *b, size_t *ip, bool opinfo)
{
    size_t i = *ip;
    trace_arena_reset(&b->arena);
    trace_arena_use(&b->arena);
    b->n = 0;
    bool more = true;
    while (b->n < BATCH_ELEMS && b->arena.used < BATCH_BYTES) {
        trace_arena_mark(&b->arena);
        const char *e = NULL;
        struct trace_evread *ev = pp->direct ? cJSON_malloc(sizeof(*ev)) : NULL;
        size_t len;
        cJSON *j = NULL;
        bool oi = opinfo && (pp->opinfo != 2 || b->n % 2);
        if (ev && trace_evread_engine(pp->p + i, pp->n - i, oi, &len, ev))
            e = pp->p + i + len;
        else
            ev = NULL, trace_arena_mark(&b->arena);
        if (!ev)
            j = trace_fastjson_parse_any(pp->p + i, pp->n - i, &e, &b->arena);
        if (!j && !ev) {
            more = false;
            break;
        }
        size_t end = (size_t)(e - pp->p);
        b->j[b->n] = j, b->ev[b->n] = ev, b->off[b->n] = i, b->end[b->n] = end;
        b->n++;
        i = skip_ws(pp, end);
        if (i >= pp->n || pp->p[i] != ',') {
            more = false;
            break;
        }
        i = skip_ws(pp, i + 1);
    }
    trace_arena_use(NULL);
    b->last = !more;
    *ip = i;
    return more;
}

static void *worker(void *arg)
{
    struct trace_pparse *pp = arg;
    size_t i = pp->at;
    for (;;) {
        pthread_mutex_lock(&pp->mu);
        if (pp->made - pp->given == NBUF) {
            pp->worker_waits = true;
            while (pp->made - pp->given > NBUF / 2 && !pp->stop)
                pthread_cond_wait(&pp->cv, &pp->mu);
            pp->worker_waits = false;
        }
        bool stop = pp->stop;
        struct batch *b = &pp->b[pp->made % NBUF];
        /* well ahead of the taker (the ring nearly full: it would soon wait): take on the op
         * columns' decode and the strings' hashes, which the taker does for the batches
         * without them (so the two sides' shares of the work balance; at half full, the
         * worker took them on too often and was the slower side by 0.7 s at 10 M events) */
        bool ahead = pp->opinfo < 0 ? pp->made - pp->given >= NBUF - 2 : pp->opinfo > 0;
        pthread_mutex_unlock(&pp->mu);
        if (stop)
            break;
        bool more = fill(pp, b, &i, ahead);
        pthread_mutex_lock(&pp->mu);
        pp->made++;
        pp->done = !more;
        if (pp->taker_waits && (pp->made - pp->given >= NBUF / 2 || pp->done))
            pthread_cond_signal(&pp->cv_taker);
        pthread_mutex_unlock(&pp->mu);
        if (!more)
            break;
    }
    return NULL;
}

struct trace_pparse *trace_pparse_start(const char *p, size_t n, size_t at, size_t limit,
                                        bool direct, bool opinfo)
{
    struct trace_pparse *pp = sim_xcalloc(1, sizeof(*pp));
    pp->p = p, pp->n = n, pp->at = at, pp->direct = direct;
    const char *oi = getenv("NPUSCOPE_LOAD_OPINFO");
    pp->opinfo = !opinfo ? 0 : oi && oi[0] >= '0' && oi[0] <= '2' && !oi[1] ? oi[0] - '0' : -1;
    for (int k = 0; k < NBUF; k++)
        pp->b[k].arena.limit = limit;
    pthread_mutex_init(&pp->mu, NULL);
    pthread_cond_init(&pp->cv, NULL);
    pthread_cond_init(&pp->cv_taker, NULL);
    if (pthread_create(&pp->th, NULL, worker, pp) != 0) {
        pthread_mutex_destroy(&pp->mu);
        pthread_cond_destroy(&pp->cv);
        pthread_cond_destroy(&pp->cv_taker);
        free(pp);
        return NULL;
    }
    return pp;
}

/* Give the batch being taken back to the worker. */
static void give_back(struct trace_pparse *pp)
{
    if (!pp->cur)
        return;
    pp->ended = pp->cur->last;
    pp->cur = NULL;
    pthread_mutex_lock(&pp->mu);
    pp->given++;
    if (pp->worker_waits && pp->made - pp->given <= NBUF / 2)
        pthread_cond_signal(&pp->cv);
    pthread_mutex_unlock(&pp->mu);
}

bool trace_pparse_take(struct trace_pparse *pp, size_t at, cJSON **j,
                       const struct trace_evread **ev, size_t *end)
{
    while (!pp->cur || pp->pos == pp->cur->n) {
        give_back(pp);
        if (pp->ended)
            return false;
        pthread_mutex_lock(&pp->mu);
        if (pp->made == pp->given) {
            pp->taker_waits = true;
            while (pp->made - pp->given < NBUF / 2 && !pp->done)
                pthread_cond_wait(&pp->cv_taker, &pp->mu);
            pp->taker_waits = false;
        }
        pp->cur = &pp->b[pp->given % NBUF];
        pthread_mutex_unlock(&pp->mu);
        pp->pos = 0;
    }
    if (pp->cur->off[pp->pos] != at) { /* not the element asked for: read on alone */
        give_back(pp);
        pp->ended = true;
        return false;
    }
    *j = pp->cur->j[pp->pos];
    *ev = pp->cur->ev[pp->pos];
    *end = pp->cur->end[pp->pos];
    pp->pos++;
    return true;
}

void trace_pparse_free(struct trace_pparse *pp)
{
    if (!pp)
        return;
    pthread_mutex_lock(&pp->mu);
    pp->stop = true;
    pthread_cond_broadcast(&pp->cv);
    pthread_mutex_unlock(&pp->mu);
    pthread_join(pp->th, NULL);
    for (int k = 0; k < NBUF; k++)
        trace_arena_fini(&pp->b[k].arena);
    pthread_mutex_destroy(&pp->mu);
    pthread_cond_destroy(&pp->cv);
    pthread_cond_destroy(&pp->cv_taker);
    free(pp);
}

/* The runnable count of a /proc/loadavg line ("0.52 0.58 0.59 3/812 12345"), or 0. */
static int loadavg_runnable(const char *s)
{
    for (int k = 0; k < 3; k++) { /* past the three load averages */
        s += strspn(s, " ");
        s += strcspn(s, " ");
    }
    int v;
    return sim_take_int(&s, &v) && v > 0 ? v : 0;
}

/* The runnable count of /proc/loadavg now (the caller included), or 0 where unreadable. */
static int proc_runnable(void *ctx)
{
    (void)ctx;
    int runnable = 0; /* the fourth field, "runnable/all", counts the caller too */
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        char line[128];
        if (fgets(line, sizeof(line), f))
            runnable = loadavg_runnable(line);
        fclose(f);
    }
    return runnable;
}

int trace_pparse_core_free_at(long cores, int (*runnable)(void *ctx), void *ctx)
{
    if (cores < 2)
        return 0;
    for (int look = 0; look < TRACE_PPARSE_CORE_LOOKS; look++) {
        if (look > 0)
            usleep(1000);
        int n = runnable(ctx);
        if (n < 1)
            return -1;
        if (n - 1 < cores)
            return 1;
    }
    return 0;
}

bool trace_pparse_core_free(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int r = trace_pparse_core_free_at(cores, proc_runnable, NULL);
    if (r >= 0)
        return r == 1;
    double load = 0;
    return getloadavg(&load, 1) == 1 && load < (double)cores;
}
