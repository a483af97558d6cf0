/*
 * The memory budget (trace/model/budget.h): --mem-budget's sizes; a live run's model whose
 * arrays live in the budget's file, their pages given back again and again, has the
 * events, track queries, op columns, transfers and region figures of the same run in the
 * heap; giving pages back lowers the resident memory and loses nothing; the budget's thread
 * keeps a model that is read whole under its budget; the file is mapped without readahead;
 * the keeper holds the file and ends after the process; a file system without room for the
 * file keeps the arrays in the heap rather than ending the process.
 */
#include "sim/host/run.h"
#include "trace/analysis/regions.h"
#include "trace/live/live.h"
#include "trace/model/budget.h"
#include "trace/model/model.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

Test(budget, sizes_take_a_unit_and_refuse_what_is_not_one)
{
    uint64_t v = 0;
    cr_assert_eq(trace_budget_parse("512M", &v), 0);
    cr_assert_eq(v, (uint64_t)512 << 20);
    cr_assert_eq(trace_budget_parse("2G", &v), 0);
    cr_assert_eq(v, (uint64_t)2 << 30);
    cr_assert_eq(trace_budget_parse("3GiB", &v), 0);
    cr_assert_eq(v, (uint64_t)3 << 30);
    cr_assert_eq(trace_budget_parse("100mb", &v), 0);
    cr_assert_eq(v, (uint64_t)100 << 20);
    cr_assert_eq(trace_budget_parse("4096K", &v), 0);
    cr_assert_eq(v, (uint64_t)4 << 20);
    cr_assert_eq(trace_budget_parse("1048576", &v), 0);
    cr_assert_eq(v, (uint64_t)1 << 20);
    cr_assert_eq(trace_budget_parse("1T", &v), 0);
    cr_assert_eq(v, (uint64_t)1 << 40);
    v = 7;
    const char *bad[] = {"",
                         "M",
                         "0",
                         "12x",
                         "-1",
                         "1K",
                         "1048575",
                         "512 M",
                         "2P",
                         "1.5G",
                         "99999999999999999999",
                         "2048T",
                         "G1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(trace_budget_parse(bad[i], &v), -1, "'%s' accepted", bad[i]);
        cr_assert_eq(v, 7, "'%s' set the result", bad[i]);
    }
    cr_assert_eq(trace_budget_parse(NULL, &v), -1);
}

struct liverun {
    struct sim_run *run;
    struct trace_live *live;
};

/* Run kernel spec to its end with the live feed filling a model. */
static const struct trace_model *run_live(const char *spec, struct liverun *r)
{
    struct diag d;
    struct sim_run_opts ro = {.kernel_spec = spec};
    cr_assert_eq(sim_run_new(&ro, &r->run, &d), 0, "%s", d.msg);
    sim_run_timing_only(r->run);
    struct trace_live_opts o = {.prefill_tokens = -1, .decode_tokens = -1};
    cr_assert_eq(trace_live_new(sim_run_chip(r->run), &o, &r->live, &d), 0, "%s", d.msg);
    /* in slices, as the TUI's frames go, with the pages given back between them */
    while (sim_run_advance(r->run, SIM_RUN_EVENTS, 5000) > 0 && !sim_run_over(r->run)) {
        trace_live_sync(r->live);
        trace_model_finish(trace_live_model(r->live));
        trace_budget_trim();
    }
    trace_live_sync(r->live);
    trace_model_finish(trace_live_model(r->live));
    return trace_live_model(r->live);
}

static void usage_eq(const struct trace_usage *a, const struct trace_usage *b)
{
    cr_assert_eq(a->busy, b->busy);
    cr_assert_eq(a->ops, b->ops);
    cr_assert_eq(a->op_cycles, b->op_cycles);
    cr_assert_eq(a->read_bytes, b->read_bytes);
    cr_assert_eq(a->write_bytes, b->write_bytes);
}

static void same_model(const struct trace_model *a, const struct trace_model *b)
{
    uint64_t n = trace_model_event_count(a);
    cr_assert_eq(n, trace_model_event_count(b));
    for (uint64_t i = 0; i < n; i++)
        cr_assert_eq(
            memcmp(trace_model_event(a, i), trace_model_event(b, i), sizeof(struct trace_event)), 0,
            "event %llu differs", (unsigned long long)i);
    for (uint64_t i = 0; i < n; i++) {
        size_t la = 0, lb = 0;
        const uint8_t *ca = trace_model_opcol(a, i, &la), *cb = trace_model_opcol(b, i, &lb);
        cr_assert_eq(!ca, !cb);
        cr_assert(!ca || (la == lb && memcmp(ca, cb, la) == 0));
    }
    cr_assert_eq(trace_model_transfer_count(a), trace_model_transfer_count(b));
    for (size_t i = 0; i < trace_model_transfer_count(a); i++)
        cr_assert_eq(memcmp(trace_model_transfer(a, i), trace_model_transfer(b, i),
                            sizeof(struct trace_transfer)),
                     0);
    cr_assert_eq(trace_model_track_count(a), trace_model_track_count(b));
    uint64_t t0 = trace_model_t_min(a), t1 = trace_model_t_max(a);
    cr_assert_eq(t0, trace_model_t_min(b));
    cr_assert_eq(t1, trace_model_t_max(b));
    for (uint32_t k = 0; k < trace_model_track_count(a); k++) {
        const uint32_t *ia, *ib;
        size_t na = trace_model_track_events(a, k, &ia), nb = trace_model_track_events(b, k, &ib);
        cr_assert_eq(na, nb);
        cr_assert(na == 0 || memcmp(ia, ib, na * sizeof(*ia)) == 0, "track %u's index", k);
        for (int c = 0; c <= 200; c++) { /* the Gantt's columns at the widest zoom */
            uint64_t x = t0 + (t1 - t0) * (uint64_t)c / 200;
            cr_assert_eq(trace_model_track_cover(a, k, x), trace_model_track_cover(b, k, x));
            cr_assert_eq(trace_model_track_seek(a, k, x), trace_model_track_seek(b, k, x));
            uint64_t w = (t1 - t0) / 997 + 1;
            cr_assert_eq(trace_model_track_busy(a, k, x, x + w),
                         trace_model_track_busy(b, k, x, x + w));
        }
    }
    for (int kind = 0; kind < TRACE_REGION_KIND_COUNT; kind++) {
        struct trace_regions *ra = trace_regions_new(a, kind), *rb = trace_regions_new(b, kind);
        cr_assert_eq(trace_regions_count(ra), trace_regions_count(rb));
        for (size_t i = 0; i < trace_regions_count(ra); i++) {
            const struct trace_region *x = trace_regions_get(ra, i), *y = trace_regions_get(rb, i);
            cr_assert_str_eq(x->name, y->name);
            cr_assert_eq(x->start, y->start);
            cr_assert_eq(x->end, y->end);
            usage_eq(&x->all, &y->all);
            for (int e = 0; e < TRACE_ENGINE_COUNT; e++)
                usage_eq(&x->engine[e], &y->engine[e]);
            cr_assert_eq(x->ntracks, y->ntracks);
            for (size_t t = 0; t < x->ntracks; t++) {
                cr_assert_eq(x->tracks[t].track, y->tracks[t].track);
                usage_eq(&x->tracks[t].u, &y->tracks[t].u);
            }
        }
        trace_regions_free(ra);
        trace_regions_free(rb);
    }
}

Test(budget, a_live_model_in_the_file_is_the_one_in_the_heap)
{
    const char *spec = "llm_decode:layers=4,gen=6";
    struct liverun heap, file;
    const struct trace_model *a = run_live(spec, &heap);
    cr_assert(!trace_budget_engaged(), "the default budget keeps a small run in the heap");
    cr_assert_gt(trace_model_event_count(a), 10000, "%llu events: too few for arrays of many pages",
                 (unsigned long long)trace_model_event_count(a));
    trace_budget_set(0); /* every array of 4 KiB or more moves into the file */
    const struct trace_model *b = run_live(spec, &file);
    cr_assert(trace_budget_engaged());
    uint64_t ev_bytes = trace_model_event_count(b) * sizeof(struct trace_event);
    cr_assert_geq(trace_budget_file_bytes(), ev_bytes, "the events are in the file");
    trace_budget_trim();
    same_model(a, b);
    trace_budget_trim();
    same_model(b, a);
    trace_live_free(file.live);
    sim_run_free(file.run);
    cr_assert_lt(trace_budget_file_bytes(), ev_bytes, "freeing the model frees its arrays");
    trace_live_free(heap.live);
    sim_run_free(heap.run);
}

/* A model of n events on a few tracks (no details), finished. */
static struct trace_model *synthetic(uint64_t n)
{
    struct trace_model *m = trace_model_new();
    uint32_t tr[4];
    for (int k = 0; k < 4; k++) {
        char name[32];
        snprintf(name, sizeof(name), "pe%d.gemm", k);
        tr[k] = trace_model_track(m, name, TRACE_ENGINE_TE, k);
    }
    uint32_t op = trace_model_intern(m, "matmul", 6);
    for (uint64_t i = 0; i < n; i++) {
        struct trace_event e = {.start = i * 10,
                                .end = i * 10 + 7 + i % 5,
                                .track = tr[i % 4],
                                .op = op,
                                .cmdq_id = TRACE_NO_CMDQ,
                                .op_kind = TRACE_KIND_GEMM};
        trace_model_add_event(m, &e);
    }
    trace_model_finish(m);
    return m;
}

static uint64_t read_all(const struct trace_model *m)
{
    uint64_t sum = 0;
    for (uint64_t i = 0; i < trace_model_event_count(m); i++)
        sum += trace_model_event(m, i)->end;
    for (uint32_t k = 0; k < trace_model_track_count(m); k++) {
        const uint32_t *idx;
        size_t n = trace_model_track_events(m, k, &idx);
        for (size_t j = 0; j < n; j++)
            sum += idx[j];
    }
    return sum;
}

Test(budget, giving_pages_back_lowers_the_resident_memory_and_keeps_the_data)
{
    trace_budget_set(0);
    struct trace_model *m = synthetic(1u << 20); /* 48 MB of events, 8 MB of indexes */
    trace_budget_set((uint64_t)1 << 40);         /* the thread gives nothing back now */
    uint64_t sum = read_all(m);
    uint64_t before = trace_budget_rss();
    cr_assert_gt(before, 0);
    trace_budget_trim();
    uint64_t after = trace_budget_rss();
    cr_assert_lt(after + (40u << 20), before, "%llu MB resident after, %llu before",
                 (unsigned long long)(after >> 20), (unsigned long long)(before >> 20));
    cr_assert_eq(read_all(m), sum);
    trace_model_free(m);
}

Test(budget, the_thread_keeps_a_model_read_whole_under_its_budget)
{
    trace_budget_set(0);
    struct trace_model *m = synthetic(1u << 21); /* 96 MB of events, 16 MB of indexes */
    trace_budget_trim();
    uint64_t base = trace_budget_rss();
    uint64_t budget = base + (48u << 20);
    trace_budget_set(budget);
    uint64_t sum = read_all(m); /* makes it all resident: more than the budget */
    uint64_t peak = 0;
    for (int i = 0; i < 20; i++) { /* 1 s */
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        uint64_t r = trace_budget_rss();
        peak = r > peak ? r : peak;
        if (r <= budget)
            break;
    }
    cr_assert_leq(
        trace_budget_rss(), budget, "%llu MB resident, budget %llu MB (peak %llu MB, %llu trims)",
        (unsigned long long)(trace_budget_rss() >> 20), (unsigned long long)(budget >> 20),
        (unsigned long long)(peak >> 20), (unsigned long long)trace_budget_trims());
    cr_assert_geq(trace_budget_trims(), 1);
    cr_assert_eq(read_all(m), sum);
    trace_model_free(m);
}

Test(budget, a_forked_copy_with_models_of_its_own_leaves_the_parents_file_alone)
{
    trace_budget_set(0);
    struct trace_model *m = synthetic(1u << 16);
    uint64_t sum = read_all(m);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        /* a what-if run: a model of its own, and the parent's freed as it exits */
        struct trace_model *own = synthetic(1u << 17);
        uint64_t s2 = read_all(own);
        trace_budget_trim();
        bool same = read_all(own) == s2;
        trace_model_free(own);
        trace_model_free(m);
        _exit(same ? 0 : 1);
    }
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the copy's own model read back wrong");
    trace_budget_trim();
    cr_assert_eq(read_all(m), sum, "the parent's model changed under it");
    struct trace_model *more = synthetic(1u << 17); /* where the copy's arrays were */
    cr_assert_eq(read_all(m), sum);
    trace_model_free(more);
    cr_assert_eq(read_all(m), sum);
    trace_model_free(m);
}

Test(budget, arrays_in_the_file_grow_in_place_side_by_side_and_keep_their_data)
{
    trace_budget_set(0);
    /* three arrays growing in turn, by doubling, as a live model's do: none is the file's
     * last for long, yet each grows in the part of the file it holds */
    enum { N = 3 };
    uint32_t *a[N] = {NULL};
    size_t len[N] = {0};
    uint64_t moves = trace_budget_moves();
    for (size_t size = 4096; size <= ((size_t)8 << 20); size *= 2)
        for (int k = 0; k < N; k++) {
            a[k] = trace_budget_realloc(a[k], len[k] * sizeof(uint32_t), size);
            for (size_t i = len[k]; i < size / sizeof(uint32_t); i++)
                a[k][i] = (uint32_t)(i * 2654435761u) ^ (uint32_t)k;
            len[k] = size / sizeof(uint32_t);
            trace_budget_trim(); /* the pages written go back to the file */
        }
    cr_assert(trace_budget_engaged());
    cr_assert_eq(trace_budget_moves(), moves, "%llu arrays copied as they grew",
                 (unsigned long long)(trace_budget_moves() - moves));
    for (int k = 0; k < N; k++) {
        for (size_t i = 0; i < len[k]; i++)
            cr_assert_eq(a[k][i], (uint32_t)(i * 2654435761u) ^ (uint32_t)k, "array %d at %zu", k,
                         i);
        /* past the room it holds, it is copied to a new place, whole */
        size_t big = len[k] * sizeof(uint32_t) * 16;
        a[k] = trace_budget_realloc(a[k], len[k] * sizeof(uint32_t), big);
        for (size_t i = 0; i < len[k]; i++)
            cr_assert_eq(a[k][i], (uint32_t)(i * 2654435761u) ^ (uint32_t)k, "array %d at %zu", k,
                         i);
        trace_budget_free(a[k], big);
    }
    cr_assert_geq(trace_budget_moves(), moves + N - 1, "the arrays outgrew their room");
}

/* The VmFlags line of /proc/self/smaps for the mapping holding p (a static buffer). */
static const char *vmflags_of(const void *p)
{
    static char flags[512];
    FILE *f = fopen("/proc/self/smaps", "re");
    cr_assert_not_null(f);
    char line[512];
    bool in = false;
    flags[0] = 0;
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
        else if (in && strncmp(line, "VmFlags:", 8) == 0)
            snprintf(flags, sizeof(flags), "%s", line + 8);
    }
    fclose(f);
    return flags;
}

/* The file is read without readahead: an array's first touch of a page reads no folio of
 * the sparse file's holes around it (zero-filling those was an eighth of a big trace's
 * load), and the array keeps that as it grows in place. */
Test(budget, arrays_in_the_file_are_mapped_without_readahead)
{
    trace_budget_set(0);
    size_t size = 64 << 10;
    uint8_t *a = trace_budget_realloc(NULL, 0, size);
    memset(a, 7, size);
    cr_assert(trace_budget_engaged());
    cr_assert(strstr(vmflags_of(a), " rr"), "VmFlags:%s", vmflags_of(a));
    a = trace_budget_realloc(a, size, 4 * size);
    cr_assert(strstr(vmflags_of(a), " rr"), "VmFlags:%s", vmflags_of(a));
    cr_assert_eq(a[size - 1], 7);
    trace_budget_free(a, 4 * size);
}

/* The target of the link /proc/PID/fd/FD in buf, or "". */
static const char *fd_target(int pid, const char *fd, char *buf, size_t n)
{
    char path[320];
    snprintf(path, sizeof(path), "/proc/%d/fd/%s", pid, fd);
    ssize_t k = readlink(path, buf, n - 1);
    buf[k > 0 ? k : 0] = 0;
    return buf;
}

/* True when the process holds a descriptor whose target is t. */
static bool holds(int pid, const char *t)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/fd", pid);
    DIR *d = opendir(path);
    bool found = false;
    for (struct dirent *e; d && !found && (e = readdir(d));)
        found = e->d_name[0] != '.' && strcmp(fd_target(pid, e->d_name, buf, sizeof(buf)), t) == 0;
    if (d)
        closedir(d);
    return found;
}

/* Ended: gone, or a zombie waiting for its reaper. */
static bool ended(int pid)
{
    char path[64], line[128];
    snprintf(path, sizeof(path), "/proc/%d/status", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return true;
    bool z = false;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "State:", 6) == 0)
            z = strchr(line, 'Z') != NULL;
    fclose(f);
    return z;
}

/* The keeper (budget.h): a process out of this one's session holds the budget's file that
 * this process made after it started, and ends, letting the file go, once this process and
 * the copies forked from it are gone. */
Test(budget, the_keeper_holds_the_file_and_ends_after_the_process)
{
    int pp[2];
    cr_assert_eq(pipe(pp), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(pp[0]);
        trace_budget_set(0);
        /* what went wrong, by bit: started, its own session, the file, held */
        int bad = trace_budget_keeper_start() == 0 ? 0 : 1;
        int keeper = trace_budget_keeper_pid();
        bad |= keeper > 0 && getsid(keeper) == keeper && getsid(keeper) != getsid(0) ? 0 : 2;
        struct trace_model *m = synthetic(1u << 16);
        bad |= trace_budget_engaged() && read_all(m) != 0 ? 0 : 4;
        /* the file this process maps shared is one the keeper holds open */
        char file[512] = "";
        FILE *f = fopen("/proc/self/maps", "re");
        char line[1024];
        while (f && !file[0] && fgets(line, sizeof(line), f)) {
            char *slash = strchr(line, '/');
            if (strstr(line, " rw-s ") && slash && strstr(line, "(deleted)")) {
                snprintf(file, sizeof(file), "%s", slash);
                file[strcspn(file, "\n")] = 0;
            }
        }
        if (f)
            fclose(f);
        /* (it gets the file over its socket: soon after) */
        bool held = false;
        for (int i = 0; !bad && file[0] && !held && i < 500; i++) {
            held = holds(keeper, file);
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        bad |= !file[0] ? 8 : !held ? 16 : 0;
        /* a copy holds the keeper's socket too: the keeper outlives it */
        pid_t copy = fork();
        if (copy == 0) {
            sleep(1);
            _exit(0);
        }
        int32_t msg[3] = {bad, keeper, copy};
        ssize_t w = write(pp[1], msg, sizeof(msg));
        (void)w;
        _exit(0); /* the model left to the kernel, as the TUI leaves */
    }
    close(pp[1]);
    int32_t msg[3] = {0, 0, 0};
    cr_assert_eq(read(pp[0], msg, sizeof(msg)), (ssize_t)sizeof(msg));
    close(pp[0]);
    cr_assert_eq(waitpid(pid, NULL, 0), pid);
    cr_assert(!msg[0],
              "the keeper did not hold the budget's file (%d: 1 not started, 2 not in a session "
              "of its own, 4 nothing in the file, 8 no file mapped, 16 not held)",
              msg[0]);
    cr_assert(!ended(msg[1]), "the keeper ended before the process's copy");
    int i = 0;
    for (; i < 1000 && !ended(msg[1]); i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    cr_assert(ended(msg[1]), "the keeper still runs 10 s after its processes ended");
    /* the copy's files are closed (the keeper then ends) a moment before the copy is a
     * zombie: that moment, waited for */
    for (i = 0; i < 100 && !ended(msg[2]); i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    cr_assert(ended(msg[2]), "the process's copy still runs");
}

static uint32_t pattern(int k, size_t i)
{
    return (uint32_t)(i * 2654435761u) ^ (uint32_t)(k << 28);
}

/* Checkpoints sharing the file (budget.h): a copy cloned at a mark (as the TUI clones its
 * checkpoints: no fork handlers) finds, once it restores, its arrays exactly as they were at
 * the mark, whatever the process changed since: bytes in place, an array grown in place, an
 * array moved past its room (its old place never reused), new arrays. */
Test(budget, a_clone_restores_what_the_process_changed_after_its_mark)
{
    trace_budget_set(0);
    enum { N = 3, LEN = 16384 }; /* 64 KiB each */
    uint32_t *a[N];
    for (int k = 0; k < N; k++) {
        a[k] = trace_budget_realloc(NULL, 0, LEN * sizeof(uint32_t));
        for (size_t i = 0; i < LEN; i++)
            a[k][i] = pattern(k, i);
    }
    cr_assert(trace_budget_engaged());
    uint64_t mark = trace_budget_ckpt_mark();
    cr_assert_neq(mark, UINT64_MAX);
    int go[2], res[2];
    cr_assert_eq(pipe(go), 0);
    cr_assert_eq(pipe(res), 0);
    pid_t c = (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, NULL, NULL, NULL, NULL);
    cr_assert_geq(c, 0);
    if (c == 0) {
        close(go[1]); /* the test's end gone: read sees it */
        close(res[0]);
        char b;
        int ok = read(go[0], &b, 1) == 1 && trace_budget_ckpt_restore(mark) == 0;
        for (int k = 0; k < N; k++)
            for (size_t i = 0; i < LEN; i++)
                ok = ok && a[k][i] == pattern(k, i);
        /* it goes on as the writer: its arrays grow and keep their data */
        a[2] = trace_budget_realloc(a[2], LEN * sizeof(uint32_t), 4 * LEN * sizeof(uint32_t));
        for (size_t i = 0; i < LEN; i++)
            ok = ok && a[2][i] == pattern(2, i);
        ssize_t w = write(res[1], &ok, sizeof(ok));
        (void)w;
        _exit(0);
    }
    /* bytes changed in place in every array, then more in place after an array grew */
    for (int k = 0; k < N; k++)
        for (size_t i = 0; i < LEN; i += 97) {
            trace_budget_will_write(&a[k][i], sizeof(a[k][i]));
            a[k][i] = 0xdeadbeef;
        }
    a[1] = trace_budget_realloc(a[1], LEN * sizeof(uint32_t), 2 * LEN * sizeof(uint32_t));
    trace_budget_will_write(a[1], 2 * LEN * sizeof(uint32_t));
    memset(a[1], 0x5a, 2 * LEN * sizeof(uint32_t));
    /* past its room (16 MiB; not the file's last array): copied to a new place, written there
     * and in the old one before */
    uint64_t moves = trace_budget_moves();
    trace_budget_will_write(a[0], LEN * sizeof(uint32_t));
    memset(a[0], 0x11, LEN * sizeof(uint32_t));
    a[0] = trace_budget_realloc(a[0], LEN * sizeof(uint32_t), (size_t)32 << 20);
    cr_assert_eq(trace_budget_moves(), moves + 1);
    memset(a[0], 0x22, (size_t)32 << 20);
    /* new arrays: none takes an old place a copy may read */
    for (int k = 0; k < 4; k++) {
        uint8_t *b = trace_budget_realloc(NULL, 0, (size_t)1 << 20);
        memset(b, 0x33, (size_t)1 << 20);
    }
    close(go[0]);
    close(res[1]);
    char g = 1;
    cr_assert_eq(write(go[1], &g, 1), 1);
    int ok = 0;
    cr_assert_eq(read(res[0], &ok, sizeof(ok)), (ssize_t)sizeof(ok));
    cr_assert_eq(waitpid(c, NULL, 0), c);
    cr_assert(ok, "the copy's arrays are not as they were at its mark");
}

/* ---- a file system without room for the file ---------------------------------------------- */

/* Three arrays grown by doubling to 8 MB each in the file (a budget of 0), on a file system
 * of 4 MB: exit 0 when every byte reads back, some in the file and the rest in the heap;
 * else the number of what failed. */
static int grow_past_the_room(void)
{
    trace_budget_set(0);
    enum { N = 3 };
    const size_t top = (size_t)8 << 20;
    uint32_t *a[N] = {NULL};
    size_t len[N] = {0};
    for (size_t size = 4096; size <= top; size *= 2)
        for (int k = 0; k < N; k++) {
            a[k] = trace_budget_realloc(a[k], len[k] * sizeof(uint32_t), size);
            for (size_t i = len[k]; i < size / sizeof(uint32_t); i++)
                a[k][i] = (uint32_t)(i * 2654435761u) ^ (uint32_t)k; /* every page written */
            len[k] = size / sizeof(uint32_t);
        }
    if (!trace_budget_engaged())
        return 2; /* nothing went to the file: the case is not the one meant */
    for (int k = 0; k < N; k++)
        for (size_t i = 0; i < len[k]; i++)
            if (a[k][i] != ((uint32_t)(i * 2654435761u) ^ (uint32_t)k))
                return 3;
    if (trace_budget_file_bytes() >= N * top)
        return 4; /* all of it in a file of 4 MB? */
    for (int k = 0; k < N; k++)
        trace_budget_free(a[k], top);
    return 0;
}

static bool write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    close(fd);
    return ok;
}

/* A mount namespace of this process's own (with a user namespace when not root), so that a
 * small file system can be mounted; false when the machine allows neither. */
static bool own_mounts(void)
{
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (uid == 0) {
        if (unshare(CLONE_NEWNS) != 0)
            return false;
    } else {
        char map[64];
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
            return false;
        snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
        if (!write_file("/proc/self/setgroups", "deny") || !write_file("/proc/self/uid_map", map))
            return false;
        snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
        if (!write_file("/proc/self/gid_map", map))
            return false;
    }
    return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0;
}

/* Run grow_past_the_room in a child whose TMPDIR is a file system of 4 MB made by mk (in the
 * child's own mount namespace, at dir); its wait status, or -1 when the file system could not
 * be made here (77 from the child). */
static int in_small_fs(bool (*mk)(const char *dir), const char *dir)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (!own_mounts() || !mk(dir))
            _exit(77);
        setenv("TMPDIR", dir, 1);
        _exit(grow_past_the_room());
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) && WEXITSTATUS(st) == 77 ? -1 : st;
}

static bool mk_tmpfs(const char *dir)
{
    return mount("tmpfs", dir, "tmpfs", 0, "size=4m") == 0;
}

/* An ext4 file system of 4 MB on a loop device (root alone may: mount(8) sets the device
 * up and lets it go at the unmount, as the namespace ends). */
static bool mk_ext4(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd),
             "truncate -s 4M %s.img && mkfs.ext4 -q -F %s.img >/dev/null 2>&1 && "
             "mount -o loop %s.img %s >/dev/null 2>&1",
             dir, dir, dir, dir);
    return getuid() == 0 && system(cmd) == 0;
}

static void expect_kept(const char *kind, int st)
{
    cr_assert(!WIFSIGNALED(st), "%s: the process ended by signal %d (%s)", kind, WTERMSIG(st),
              strsignal(WTERMSIG(st)));
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "%s: exit %d (2: nothing in the file, 3: a byte lost, 4: all in the file)", kind,
              WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* A page of the file written through its mapping takes room only then, and a full file
 * system answers that write with SIGBUS: the room is taken before the arrays are mapped, so
 * what finds none stays in the heap. On a tmpfs (the room asked for) and, as root, on ext4
 * (the room reserved); the tmpfs is made in a user namespace where the machine allows it. */
Test(budget, a_full_file_system_keeps_the_arrays_in_the_heap)
{
    char dir[] = "/tmp/npuscope-roomXXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    int tmpfs = in_small_fs(mk_tmpfs, dir);
    int ext4 = in_small_fs(mk_ext4, dir);
    char img[sizeof(dir) + 8];
    snprintf(img, sizeof(img), "%s.img", dir);
    unlink(img);
    rmdir(dir);
    if (tmpfs < 0 && ext4 < 0)
        cr_skip_test("no file system of 4 MB can be mounted here (neither root nor a user "
                     "namespace)");
    if (tmpfs >= 0)
        expect_kept("tmpfs", tmpfs);
    if (ext4 >= 0)
        expect_kept("ext4", ext4);
}
