/* KV-cache traffic: memory ranges tagged with a role (sim/chip/roles.h) make the op records
 * of the DMA ops touching them say so, the trace writes details.tensor_role at the top of
 * their details, and summary_metrics.kv_cache counts their bytes, live and loaded back. */
#include "sim/chip/chip.h"
#include "sim/chip/oplog.h"
#include "sim/chip/roles.h"
#include "sim/engine/engine.h"
#include "sim/host/run.h"
#include "sim/host/host.h"
#include "sim/kernel/kernel.h"
#include "sim/program/workload.h"
#include "test_tmpdir.h"
#include "trace/live/live.h"
#include "trace/file/loader.h"
#include "trace/analysis/metrics.h"
#include "trace/file/report.h"

#include <cjson/cJSON.h>
#include <string.h>

TestSuite(kvcache, .init = mkdir_tmp, .fini = rm_tmp);

Test(kvcache, roles_of_ranges)
{
    struct sim_roles *r = sim_roles_new();
    cr_assert_null(sim_roles_find(r, "hbm", 0, 16));
    sim_roles_tag(r, "hbm", 1000, 100, "kv", 3);
    sim_roles_tag(r, "hbm", 5000, 0, "kv", 3); /* empty: nothing */
    sim_roles_tag(r, "tcm", 0, 64, "scratch", 4);
    cr_assert_eq(sim_roles_count(r), 2);
    cr_assert_str_eq(sim_roles_find(r, "hbm", 1099, 1), "kv");
    cr_assert_str_eq(sim_roles_find(r, "hbm", 900, 101), "kv", "overlapping its first byte");
    cr_assert_null(sim_roles_find(r, "hbm", 900, 100), "ends where it starts");
    cr_assert_null(sim_roles_find(r, "hbm", 1100, 10));
    cr_assert_null(sim_roles_find(r, "tcm", 1000, 10), "another space");
    cr_assert_str_eq(sim_roles_find(r, "tcm", 10, 0), "scratch", "a range of 0 bytes at 10");
    /* tags at the top of the address space (ranges end there) keep the others in order */
    sim_roles_tag(r, "hbm", UINT64_MAX, 1, "top", 5);
    sim_roles_tag(r, "hbm", UINT64_MAX - 16, 8, "top", 5);
    sim_roles_tag(r, "hbm", 2000, 10, "kv", 5);
    cr_assert_str_eq(sim_roles_find(r, "hbm", UINT64_MAX - 10, 1), "top");
    cr_assert_str_eq(sim_roles_find(r, "hbm", 2005, 1), "kv");
    cr_assert_str_eq(sim_roles_find(r, "hbm", 1050, 1), "kv");
    cr_assert_null(sim_roles_find(r, "hbm", 3000, 10));
    sim_roles_drop(r, 5);
    sim_roles_drop(r, 3);
    cr_assert_null(sim_roles_find(r, "hbm", 1000, 10));
    cr_assert_eq(sim_roles_count(r), 1);
    sim_roles_free(r);
    sim_roles_free(NULL);
}

/* Many shards, overlapping and nested, some dropped: every look-up agrees with a walk of
 * all the tags from the newest, as the table's contract says. */
Test(kvcache, roles_agree_with_a_walk_of_every_tag)
{
    enum { N = 600 };
    static const char *const roles[] = {"kv", "w", "act"};
    struct {
        uint64_t start, end;
        int64_t owner;
        int role;
        bool live;
    } t[N];
    struct sim_roles *r = sim_roles_new();
    uint64_t x = 88172645463325252u;
    for (int i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t start = x % 100000, len = 1 + (x >> 20) % (i % 7 == 0 ? 5000 : 300);
        t[i].start = start, t[i].end = start + len;
        t[i].owner = (int64_t)(i % 5), t[i].role = (int)((x >> 40) % 3), t[i].live = true;
        sim_roles_tag(r, "hbm", start, len, roles[t[i].role], t[i].owner);
    }
    sim_roles_drop(r, 2);
    for (int i = 0; i < N; i++)
        t[i].live = t[i].owner != 2;
    cr_assert_eq(sim_roles_count(r), (size_t)(N - N / 5));
    for (uint64_t a = 0; a < 106000; a += 37) {
        uint64_t nb = a % 3 ? 1 + a % 97 : 0, end = a + (nb ? nb : 1);
        const char *want = NULL;
        for (int i = N; i-- > 0;)
            if (t[i].live && t[i].start < end && a < t[i].end) {
                want = roles[t[i].role];
                break;
            }
        const char *got = sim_roles_find(r, "hbm", a, nb);
        if (want)
            cr_assert(got && strcmp(got, want) == 0, "at %llu+%llu: %s, not %s",
                      (unsigned long long)a, (unsigned long long)nb, got ? got : "none", want);
        else
            cr_assert_null(got, "at %llu: %s", (unsigned long long)a, got);
        cr_assert_null(sim_roles_find(r, "tcm", a, nb));
    }
    sim_roles_free(r);
}

/* Loads the cache (argument 0) and the weights (argument 1), stores into the cache. */
static void cache_kernel(struct tl *tl, const struct kargs *a)
{
    struct tl_tensor *kv = tl_arg(tl, a, 0), *w = tl_arg(tl, a, 1);
    struct tl_tensor *x = tl_add(tl, tl_load(tl, kv), tl_load(tl, w));
    tl_store(tl, kv, x);
}

static const struct sim_kernel cache_def = {.name = "cache", .fn = cache_kernel};

static const char program[] =
    "messages:\n"
    "- {msg_type: MemoryWrite, correlation_id: c, request_id: w0, target_device: \"sip:0\",\n"
    "   dst_sip: 0, dst_cube: 0, dst_pe: 0, dst_pa: 0, nbytes: 256, dst_mem_kind: HBM,\n"
    "   src_kind: pattern, pattern: {pattern_kind: zero}, dtype: f32}\n"
    "- {msg_type: MemoryWrite, correlation_id: c, request_id: w1, target_device: \"sip:0\",\n"
    "   dst_sip: 0, dst_cube: 0, dst_pe: 0, dst_pa: 4096, nbytes: 256, dst_mem_kind: HBM,\n"
    "   src_kind: pattern, pattern: {pattern_kind: zero}, dtype: f32}\n"
    "- msg_type: KernelLaunch\n  correlation_id: c\n  request_id: k\n"
    "  target_device: \"sip:0\"\n"
    "  kernel_ref: {name: cache, kind: builtin, deploy_sip: 0, deploy_cube: 0,\n"
    "               deploy_pe: 0, nbytes_code: 0}\n"
    "  args:\n"
    "  - {arg_kind: tensor, dtype: f32, shape: [64], tensor_pa_map: {shards: [\n"
    "     {sip: 0, cube: 0, pe: 0, pa: 0, nbytes: 256, offset_bytes: 0}]}}\n"
    "  - {arg_kind: tensor, dtype: f32, shape: [64], tensor_pa_map: {shards: [\n"
    "     {sip: 0, cube: 0, pe: 0, pa: 4096, nbytes: 256, offset_bytes: 0}]}}\n";

Test(kvcache, tagged_memory_reaches_the_op_records_the_trace_and_its_summary)
{
    struct sim_config *cfg;
    struct sim_workload *wl;
    struct diag d;
    cr_assert_eq(sim_config_load_embedded("sim/configs/tiny.yaml", &cfg, &d), 0, "%s", d.msg);
    cr_assert_eq(sim_workload_load(program, strlen(program), "t.yaml", &wl, &d), 0, "%s", d.msg);
    struct sim_chip *chip = sim_chip_new(cfg, 0);
    struct sim_host *host = sim_host_start(chip, wl, NULL);
    sim_host_add_kernel(host, &cache_def);
    /* the cache: PE 0's PA [0, 256) */
    sim_roles_tag(sim_chip_roles(chip), "hbm", sim_chip_dev_addr(0, 0), 256, "kv", 2);
    char path[128];
    snprintf(path, sizeof(path), "%s/kv.json", dir);
    struct trace_live_opts o = {.trace_path = path,
                                .timestamp = 1764498765,
                                .model_name = "test",
                                .cmdq_file = "t.yaml",
                                .prefill_tokens = -1,
                                .decode_tokens = -1};
    struct trace_live *l;
    cr_assert_eq(trace_live_new(chip, &o, &l, &d), 0, "%s", d.msg);
    sim_engine_run(sim_chip_engine(chip), SIM_RUN_END, 0);
    cr_assert(sim_host_result(host, 2)->resp.completion.ok);
    cr_assert_eq(trace_live_finish(l, true, &d), 0, "%s", d.msg);

    /* the op records: the cache's load and store have the role, the weights' load not */
    size_t n, tagged = 0;
    struct sim_op_record *const *recs = sim_oplog_records(sim_chip_oplog(chip), &n);
    for (size_t i = 0; i < n; i++) {
        const char *role = sim_value_get_str(recs[i]->note.replay, "tensor_role", NULL);
        int64_t addr = sim_value_get_int(
            recs[i]->params, strcmp(recs[i]->op_name, "dma_write") == 0 ? "dst_addr" : "src_addr",
            -1);
        if (strcmp(recs[i]->op_kind, "memory") != 0)
            continue;
        bool cache = addr >= 0 && (uint64_t)addr < sim_chip_dev_addr(0, 256);
        cr_assert_eq(role != NULL, cache, "%s at %lld", recs[i]->op_name, (long long)addr);
        tagged += role != NULL;
        /* ADR-0052 D3's params stay exactly D3's */
        cr_assert_null(sim_value_map_get(recs[i]->params, "tensor_role"));
    }
    cr_assert_eq(tagged, 2, "the cache's load and its store");

    /* the live model and the file's summary: 256 bytes read and 256 written */
    struct trace_metrics x;
    trace_metrics_compute(trace_live_model(l), &x);
    cr_assert(x.has_kv);
    cr_assert_eq(x.kv_read, 256);
    cr_assert_eq(x.kv_write, 256);
    cr_assert_eq(x.dram_read, 512, "the weights are DRAM traffic too, not KV");
    trace_metrics_fini(&x);
    size_t len;
    char *text = slurp(path, &len);
    cJSON *j = cJSON_Parse(text);
    free(text);
    const cJSON *kv = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "summary_metrics"), "kv_cache");
    cr_assert_not_null(kv);
    cr_assert_eq(cJSON_GetObjectItem(kv, "bytes_read")->valuedouble, 256);
    cr_assert_eq(cJSON_GetObjectItem(kv, "bytes_written")->valuedouble, 256);
    /* each DMA event on the cache has tensor_role at the top of its details, not in replay */
    size_t seen = 0;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(j, "timeline_events"))
    {
        const cJSON *det = cJSON_GetObjectItem(ev, "details");
        const cJSON *role = cJSON_GetObjectItem(det, "tensor_role");
        cr_assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(det, "replay"), "tensor_role"));
        if (role) {
            cr_assert_str_eq(role->valuestring, "kv");
            seen++;
        }
    }
    cr_assert_eq(seen, 2);
    cJSON_Delete(j);
    /* loaded back: the same */
    struct trace_model *back;
    cr_assert_eq(trace_load_file(path, NULL, &back, &d), 0, "%s", d.msg);
    trace_metrics_compute(back, &x);
    cr_assert_eq(x.kv_read, 256);
    cr_assert_eq(x.kv_write, 256);
    trace_metrics_fini(&x);
    trace_model_free(back);

    trace_live_free(l);
    sim_chip_free(chip);
    sim_workload_free(wl);
    sim_config_free(cfg);
}

/* ---- llm_decode: the kv_cache block against the cache's loads and stores ---------------- */

struct range {
    uint64_t a, b;
};

/* The HBM ranges of llm_decode's kcache and vcache in r's host program: the shards of the
 * launch's arguments of those names (by the kernel's table), as device addresses. */
static size_t cache_ranges(const struct sim_run *r, struct range *out, size_t max)
{
    const struct sim_workload *wl = sim_run_workload(r);
    size_t n = 0;
    for (size_t m = 0; m < wl->n_msgs; m++) {
        if (wl->msgs[m].msg_type != SIM_MSG_KERNEL_LAUNCH)
            continue;
        const struct sim_kernel_launch *kl = &wl->msgs[m].u.launch;
        const struct sim_kernel *k = sim_kernel_find(kl->kernel_ref.name);
        cr_assert_not_null(k);
        for (size_t i = 0; i < kl->n_args; i++) {
            const char *name = sim_kernel_arg_name(k, i);
            if (!name || (strcmp(name, "kcache") != 0 && strcmp(name, "vcache") != 0))
                continue;
            for (size_t j = 0; j < kl->args[i].n_shards; j++) {
                const struct sim_tensor_shard *s = &kl->args[i].shards[j];
                int g = sim_chip_pe_index(sim_run_chip(r), s->sip, s->cube, s->pe);
                cr_assert_lt(n, max);
                uint64_t a = sim_chip_dev_addr(g, (uint64_t)s->pa);
                out[n++] = (struct range){a, a + (uint64_t)s->nbytes};
            }
        }
    }
    return n;
}

static bool in_cache(const struct range *v, size_t n, int64_t addr, int64_t nbytes)
{
    for (size_t i = 0; i < n; i++)
        if (addr >= 0 && (uint64_t)addr < v[i].b && (uint64_t)(addr + nbytes) > v[i].a)
            return true;
    return false;
}

static void check_llm_decode(const char *spec)
{
    struct sim_run_opts ro = {.kernel_spec = spec};
    struct sim_run *r;
    struct diag d;
    cr_assert_eq(sim_run_new(&ro, &r, &d), 0, "%s", d.msg);
    char path[128];
    snprintf(path, sizeof(path), "%s/llm.json", dir);
    struct trace_live_opts o = {.trace_path = path,
                                .timestamp = 1764498765,
                                .model_name = "llm_decode",
                                .cmdq_file = spec,
                                .prefill_tokens = -1,
                                .decode_tokens = -1};
    struct trace_live *l;
    cr_assert_eq(trace_live_new(sim_run_chip(r), &o, &l, &d), 0, "%s", d.msg);
    while (!sim_run_over(r)) {
        sim_run_advance(r, SIM_RUN_EVENTS, 5000);
        trace_live_sync(l);
    }
    cr_assert_eq(trace_live_finish(l, true, &d), 0, "%s", d.msg);
    for (size_t i = 0; i < sim_run_requests(r); i++)
        cr_assert(sim_host_result(sim_run_host(r), i)->resp.completion.ok, "%s: request %zu", spec,
                  i);

    /* counted independently: every DMA op record whose HBM side lies in a cache shard */
    struct range ranges[256];
    size_t nr = cache_ranges(r, ranges, 256);
    cr_assert_gt(nr, 1, "%s: kcache and vcache shards", spec);
    uint64_t want_read = 0, want_write = 0, dram_read = 0;
    size_t n;
    struct sim_op_record *const *recs = sim_oplog_records(sim_chip_oplog(sim_run_chip(r)), &n);
    for (size_t i = 0; i < n; i++) {
        const struct sim_op_record *rec = recs[i];
        int64_t nb = sim_value_get_int(rec->params, "nbytes", 0);
        if (strcmp(rec->op_name, "dma_read") == 0 &&
            strcmp(sim_value_get_str(rec->note.replay, "src_space", "hbm"), "hbm") == 0) {
            dram_read += (uint64_t)nb;
            if (in_cache(ranges, nr, sim_value_get_int(rec->params, "src_addr", -1), nb))
                want_read += (uint64_t)nb;
        } else if (strcmp(rec->op_name, "dma_write") == 0 &&
                   in_cache(ranges, nr, sim_value_get_int(rec->params, "dst_addr", -1), nb)) {
            want_write += (uint64_t)nb;
        } else if (strcmp(rec->op_name, "ipcq_copy") == 0) {
            const char *ss = sim_value_get_str(rec->params, "src_space", "");
            const char *ds = sim_value_get_str(rec->params, "dst_space", "");
            cr_assert(!(strcmp(ss, "hbm") == 0 &&
                        in_cache(ranges, nr, sim_value_get_int(rec->params, "src_addr", -1), nb)));
            cr_assert(!(strcmp(ds, "hbm") == 0 &&
                        in_cache(ranges, nr, sim_value_get_int(rec->params, "dst_addr", -1), nb)));
        }
    }
    cr_assert_gt(want_read, 0, "%s: the cache is read", spec);
    cr_assert_gt(want_write, 0, "%s: the cache is written", spec);
    cr_assert_lt(want_read, dram_read, "%s: the weights are read too, and are not KV", spec);

    /* the live model's metrics, the file's summary_metrics and the file loaded back */
    struct trace_metrics x;
    trace_metrics_compute(trace_live_model(l), &x);
    cr_assert(x.has_kv);
    cr_assert_eq(x.kv_read, want_read, "%s: %llu read, counted %llu", spec,
                 (unsigned long long)x.kv_read, (unsigned long long)want_read);
    cr_assert_eq(x.kv_write, want_write, "%s: %llu written, counted %llu", spec,
                 (unsigned long long)x.kv_write, (unsigned long long)want_write);
    trace_metrics_fini(&x);
    char *text = slurp(path, NULL);
    cJSON *j = cJSON_Parse(text);
    free(text);
    const cJSON *kv = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "summary_metrics"), "kv_cache");
    cr_assert_not_null(kv, "%s: summary_metrics.kv_cache", spec);
    cr_assert_eq((uint64_t)cJSON_GetObjectItem(kv, "bytes_read")->valuedouble, want_read);
    cr_assert_eq((uint64_t)cJSON_GetObjectItem(kv, "bytes_written")->valuedouble, want_write);
    cJSON_Delete(j);
    struct trace_model *back;
    cr_assert_eq(trace_load_file(path, NULL, &back, &d), 0, "%s", d.msg);
    trace_metrics_compute(back, &x);
    cr_assert_eq(x.kv_read, want_read);
    cr_assert_eq(x.kv_write, want_write);
    trace_metrics_fini(&x);
    trace_model_free(back);
    /* the launch is over: its tags are gone */
    cr_assert_eq(sim_roles_count(sim_chip_roles(sim_run_chip(r))), 0);
    trace_live_free(l);
    sim_run_free(r);
}

Test(kvcache, llm_decode_kv_bytes_are_its_cache_loads_and_stores, .timeout = 120)
{
    check_llm_decode("llm_decode");
    check_llm_decode("llm_decode:pes=2,kv_heads=1,gen=6,dtype=f16");
}
