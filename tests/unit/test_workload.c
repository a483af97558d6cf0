/* Workloads (ADR-0012 messages): loading, every mandatory field, types, enums, ids,
 * placement against a chip, completions and responses. */
#include "sim/program/workload.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One line of a message template: its text, and for a mandatory line the key path named
 * when it is left out, the message, and the position reported (the enclosing map). */
struct tline {
    const char *text;
    const char *path; /* NULL: not a field to leave out */
    const char *msg;
    int line, col;
};

#define MISSING "missing mandatory field"

static const struct tline write_msg[] = {
    {"messages:", NULL, NULL, 0, 0},
    {"  -", NULL, NULL, 0, 0},
    {"    msg_type: MemoryWrite", "msg_type", MISSING, 3, 5},
    {"    correlation_id: c0", "correlation_id", MISSING, 3, 5},
    {"    request_id: r0", "request_id", MISSING, 3, 5},
    {"    target_device: \"sip:0\"", "target_device", MISSING, 3, 5},
    {"    dst_sip: 0", "dst_sip", MISSING, 3, 5},
    {"    dst_cube: 0", "dst_cube", MISSING, 3, 5},
    {"    dst_pe: 1", "dst_pe", MISSING, 3, 5},
    {"    dst_pa: 4096", "dst_pa", MISSING, 3, 5},
    {"    nbytes: 64", "nbytes", MISSING, 3, 5},
    {"    src_kind: pattern", "src_kind", MISSING, 3, 5},
    {"    pattern: {pattern_kind: fill_fp32, value: 1.5}", "pattern",
     "required when src_kind is pattern", 3, 5},
    {NULL, NULL, NULL, 0, 0},
};

static const struct tline read_msg[] = {
    {"messages:", NULL, NULL, 0, 0},
    {"  -", NULL, NULL, 0, 0},
    {"    msg_type: MemoryRead", "msg_type", MISSING, 3, 5},
    {"    correlation_id: c0", "correlation_id", MISSING, 3, 5},
    {"    request_id: r0", "request_id", MISSING, 3, 5},
    {"    target_device: \"sip:0\"", "target_device", MISSING, 3, 5},
    {"    src_sip: 0", "src_sip", MISSING, 3, 5},
    {"    src_cube: 0", "src_cube", MISSING, 3, 5},
    {"    src_pe: 1", "src_pe", MISSING, 3, 5},
    {"    src_pa: 4096", "src_pa", MISSING, 3, 5},
    {"    nbytes: 64", "nbytes", MISSING, 3, 5},
    {NULL, NULL, NULL, 0, 0},
};

#define SHARD "args[0].tensor_pa_map.shards[0]."
static const struct tline launch_msg[] = {
    {"messages:", NULL, NULL, 0, 0},
    {"  -", NULL, NULL, 0, 0},
    {"    msg_type: KernelLaunch", "msg_type", MISSING, 3, 5},
    {"    correlation_id: c0", "correlation_id", MISSING, 3, 5},
    {"    request_id: r0", "request_id", MISSING, 3, 5},
    {"    target_device: \"sip:0\"", "target_device", MISSING, 3, 5},
    {"    kernel_ref:", NULL, NULL, 0, 0},
    {"      name: vector_add", "kernel_ref.name", MISSING, 8, 7},
    {"      kind: deployed", "kernel_ref.kind", MISSING, 8, 7},
    {"      deploy_pa: 8192", "kernel_ref.deploy_pa", "required for a deployed kernel", 8, 7},
    {"      deploy_sip: 0", "kernel_ref.deploy_sip", MISSING, 8, 7},
    {"      deploy_cube: 0", "kernel_ref.deploy_cube", MISSING, 8, 7},
    {"      deploy_pe: 0", "kernel_ref.deploy_pe", MISSING, 8, 7},
    {"      nbytes_code: 256", "kernel_ref.nbytes_code", MISSING, 8, 7},
    {"    args:", NULL, NULL, 0, 0},
    {"      -", NULL, NULL, 0, 0},
    {"        arg_kind: tensor", "args[0].arg_kind", MISSING, 17, 9},
    {"        tensor_pa_map:", NULL, NULL, 0, 0},
    {"          shards:", NULL, NULL, 0, 0},
    {"            -", NULL, NULL, 0, 0},
    {"              sip: 0", SHARD "sip", MISSING, 21, 15},
    {"              cube: 0", SHARD "cube", MISSING, 21, 15},
    {"              pe: 0", SHARD "pe", MISSING, 21, 15},
    {"              pa: 0", SHARD "pa", MISSING, 21, 15},
    {"              nbytes: 64", SHARD "nbytes", MISSING, 21, 15},
    {"              offset_bytes: 0", SHARD "offset_bytes", MISSING, 21, 15},
    {"      -", NULL, NULL, 0, 0},
    {"        arg_kind: scalar", "args[1].arg_kind", MISSING, 28, 9},
    {"        dtype: i32", "args[1].dtype", MISSING, 28, 9},
    {"        value: 16", "args[1].value", MISSING, 28, 9},
    {NULL, NULL, NULL, 0, 0},
};

/* The template's text, leaving out line skip (-1: none) or replacing it with repl. */
static char *render(const struct tline *t, int skip, const char *repl)
{
    size_t cap = 8192, n = 0;
    char *buf = malloc(cap);
    buf[0] = '\0';
    for (int i = 0; t[i].text; i++) {
        if (i == skip && !repl)
            continue;
        n += (size_t)snprintf(buf + n, cap - n, "%s\n", i == skip ? repl : t[i].text);
    }
    return buf;
}

static struct sim_workload *load_ok(const char *text)
{
    struct sim_workload *w = NULL;
    struct diag d;
    char buf[1024];
    int rc = sim_workload_load(text, strlen(text), "w.yaml", &w, &d);
    cr_assert_eq(rc, 0, "unexpected error: %s", diag_format(&d, buf, sizeof(buf)));
    return w;
}

static const char *load_err(const char *text)
{
    static char buf[1024];
    struct sim_workload *w = NULL;
    struct diag d;
    cr_assert_lt(sim_workload_load(text, strlen(text), "w.yaml", &w, &d), 0);
    cr_assert_null(w);
    return diag_format(&d, buf, sizeof(buf));
}

/* Leave out each mandatory line in turn: the error names exactly that field. */
static void each_field_is_mandatory(const struct tline *t)
{
    char *full = render(t, -1, NULL);
    sim_workload_free(load_ok(full));
    free(full);
    int checked = 0;
    for (int i = 0; t[i].text; i++) {
        if (!t[i].path)
            continue;
        char *text = render(t, i, NULL);
        char want[512];
        snprintf(want, sizeof(want), "w.yaml:%d:%d: key 'messages[0].%s': %s", t[i].line, t[i].col,
                 t[i].path, t[i].msg);
        cr_expect_str_eq(load_err(text), want, "leaving out '%s'", t[i].text);
        free(text);
        checked++;
    }
    cr_assert_gt(checked, 0);
}

Test(workload, memory_write_mandatory_fields)
{
    each_field_is_mandatory(write_msg);
}

Test(workload, memory_read_mandatory_fields)
{
    each_field_is_mandatory(read_msg);
}

Test(workload, kernel_launch_mandatory_fields)
{
    each_field_is_mandatory(launch_msg);
}

Test(workload, full_messages_load_with_their_fields)
{
    char *t = render(launch_msg, -1, NULL);
    struct sim_workload *w = load_ok(t);
    free(t);
    cr_assert_eq(w->n_msgs, 1);
    const struct sim_host_msg *m = &w->msgs[0];
    cr_assert_eq(m->msg_type, SIM_MSG_KERNEL_LAUNCH);
    cr_assert_str_eq(m->correlation_id, "c0");
    cr_assert_str_eq(m->request_id, "r0");
    cr_assert_str_eq(m->target_device, "sip:0");
    cr_assert_null(m->timestamp_tag);
    cr_assert_eq(m->line, 3);
    const struct sim_kernel_launch *l = &m->u.launch;
    cr_assert_str_eq(l->kernel_ref.name, "vector_add");
    cr_assert_eq(l->kernel_ref.kind, SIM_KERNEL_DEPLOYED);
    cr_assert(l->kernel_ref.has_deploy_pa);
    cr_assert_eq(l->kernel_ref.deploy_pa, 8192);
    cr_assert_eq(l->kernel_ref.nbytes_code, 256);
    cr_assert_eq(l->n_args, 2);
    cr_assert_eq(l->args[0].arg_kind, SIM_ARG_TENSOR);
    cr_assert_eq(l->args[0].n_shards, 1);
    cr_assert_eq(l->args[0].shards[0].nbytes, 64);
    cr_assert_not(l->args[0].has_dtype);
    cr_assert_eq(l->args[1].arg_kind, SIM_ARG_SCALAR);
    cr_assert_eq(l->args[1].dtype, SIM_SCALAR_I32);
    cr_assert_eq(l->args[1].value.i, 16);
    cr_assert_eq(l->failure_policy, SIM_FAIL_FAST); /* the default */
    cr_assert_null(l->grid);
    cr_assert_null(l->meta);
    cr_assert_null(l->debug_label);
    sim_workload_free(w);

    t = render(write_msg, -1, NULL);
    w = load_ok(t);
    free(t);
    const struct sim_memory_write *mw = &w->msgs[0].u.write;
    cr_assert_eq(mw->dst_pe, 1);
    cr_assert_eq(mw->dst_pa, 4096);
    cr_assert_eq(mw->nbytes, 64);
    cr_assert_eq(mw->src_kind, SIM_SRC_PATTERN);
    cr_assert_eq(mw->pattern.pattern_kind, SIM_PATTERN_FILL_FP32);
    cr_assert(mw->pattern.has_value);
    cr_assert_eq(mw->pattern.value, 1.5);
    cr_assert_eq(mw->dst_mem_kind, SIM_MEM_AUTO);
    /* typed by the pattern when no dtype is given: 64 bytes of f32 */
    cr_assert_eq(mw->dtype, SIM_F32);
    cr_assert_eq(mw->ndim, 1);
    cr_assert_eq(mw->shape[0], 16);
    cr_assert_null(mw->host_buffer_ref);
    sim_workload_free(w);

    t = render(read_msg, -1, NULL);
    w = load_ok(t);
    free(t);
    cr_assert_eq(w->msgs[0].u.read.src_pa, 4096);
    cr_assert_eq(w->msgs[0].u.read.dst_kind, SIM_DST_HOST_SINK);
    sim_workload_free(w);
}

Test(workload, builtin_kernel_needs_no_deploy_pa)
{
    char *t = render(launch_msg, 8, "      kind: builtin");
    char *u = strstr(t, "      deploy_pa: 8192\n");
    memmove(u, u + strlen("      deploy_pa: 8192\n"),
            strlen(u) - strlen("      deploy_pa: 8192\n") + 1);
    struct sim_workload *w = load_ok(t);
    cr_assert_eq(w->msgs[0].u.launch.kernel_ref.kind, SIM_KERNEL_BUILTIN);
    cr_assert_not(w->msgs[0].u.launch.kernel_ref.has_deploy_pa);
    sim_workload_free(w);
    free(t);
}

struct replace_case {
    const struct tline *tmpl;
    int line;         /* template line to replace */
    const char *repl; /* its new text */
    const char *want; /* the whole error line */
};

Test(workload, wrong_types_and_values)
{
    static const struct replace_case cases[] = {
        {write_msg, 3, "    correlation_id: 5",
         "w.yaml:4:21: key 'messages[0].correlation_id': expected a string, got int 5"},
        {write_msg, 9, "    dst_pa: \"0x1000\"",
         "w.yaml:10:13: key 'messages[0].dst_pa': expected an integer, got str '0x1000'"},
        {write_msg, 10, "    nbytes: 1.5",
         "w.yaml:11:13: key 'messages[0].nbytes': expected an integer, got float 1.5"},
        {write_msg, 10, "    nbytes: 0",
         "w.yaml:11:13: key 'messages[0].nbytes': must be > 0, got 0"},
        {write_msg, 6, "    dst_sip: -1",
         "w.yaml:7:14: key 'messages[0].dst_sip': must be >= 0, got -1"},
        {write_msg, 2, "    msg_type: MemWrite",
         "w.yaml:3:15: key 'messages[0].msg_type': must be one of MemoryWrite, MemoryRead, "
         "KernelLaunch; got 'MemWrite'"},
        {write_msg, 11, "    src_kind: 3",
         "w.yaml:12:15: key 'messages[0].src_kind': expected one of pattern, host_buffer_ref, "
         "got int 3"},
        {write_msg, 12, "    pattern: {pattern_kind: fill_u64, value: 1}",
         "w.yaml:13:29: key 'messages[0].pattern.pattern_kind': must be one of zero, fill_u8, "
         "fill_u16, fill_u32, fill_fp16, fill_fp32; got 'fill_u64'"},
        {write_msg, 12, "    pattern: {pattern_kind: fill_u8}",
         "w.yaml:13:14: key 'messages[0].pattern.value': required for pattern_kind fill_u8"},
        {write_msg, 12, "    pattern: {pattern_kind: fill_u8, value: 256}",
         "w.yaml:13:45: key 'messages[0].pattern.value': must be between 0 and 255 for fill_u8, "
         "got 256"},
        {write_msg, 12, "    pattern: {pattern_kind: fill_u32, value: 1.5}",
         "w.yaml:13:46: key 'messages[0].pattern.value': expected an integer, got float 1.5"},
        {write_msg, 12, "    pattern: {pattern_kind: fill_fp16, value: 70000}",
         "w.yaml:13:47: key 'messages[0].pattern.value': 70000 is out of the range of fill_fp16 "
         "(|value| <= 65504)"},
        {write_msg, 12, "    pattern: fill",
         "w.yaml:13:14: key 'messages[0].pattern': expected a map, got str 'fill'"},
        {write_msg, 12, "    pattern: {pattern_kind: zero, valu: 0}",
         "w.yaml:13:35: key 'messages[0].pattern.valu': unknown field (did you mean 'value'?)"},
        {write_msg, 10, "    nbytes: 66",
         "w.yaml:11:13: key 'messages[0].nbytes': 66 is not a multiple of the fill_fp32 element "
         "size 4"},
        {write_msg, 3, "    corelation_id: c0",
         "w.yaml:4:5: key 'messages[0].corelation_id': unknown field (did you mean "
         "'correlation_id'?)"},
        {write_msg, 5, "    target_device: \"sip:0\"\n    dst_mem_kind: hbm",
         "w.yaml:7:19: key 'messages[0].dst_mem_kind': must be one of AUTO, HBM, TCM; got 'hbm'"},
        {write_msg, 5, "    target_device: \"sip:0\"\n    dtype: f32\n    shape: [4, 3]",
         "w.yaml:8:12: key 'messages[0].shape': shape holds 48 bytes of 4-byte elements but "
         "nbytes is 64"},
        {write_msg, 5, "    target_device: \"sip:0\"\n    dtype: f128",
         "w.yaml:7:12: key 'messages[0].dtype': unknown dtype 'f128' (f32, f16, bf16, i8, i16, "
         "i32, i64, u8, u16, u32, bool)"},
        {write_msg, 5, "    target_device: \"sip:0\"\n    shape: [4, -1]",
         "w.yaml:7:16: key 'messages[0].shape[1]': a dimension must be an integer >= 0"},
        {write_msg, 5, "    target_device: \"sip:0\"\n    host_buffer_ref: x.bin",
         "w.yaml:7:22: key 'messages[0].host_buffer_ref': only allowed when src_kind is "
         "host_buffer_ref"},
        {write_msg, 5, "    target_device: \"sip:0\"\n    timestamp_tag: 12",
         "w.yaml:7:20: key 'messages[0].timestamp_tag': expected a string or null, got int 12"},
        {read_msg, 5, "    target_device: \"sip:0\"\n    dst_kind: host",
         "w.yaml:7:15: key 'messages[0].dst_kind': must be one of host_sink, discard; got 'host'"},
        {read_msg, 5, "    target_device: \"sip:0\"\n    pattern: {pattern_kind: zero}",
         "w.yaml:7:5: key 'messages[0].pattern': unknown field"},
        {launch_msg, 8, "      kind: jit",
         "w.yaml:9:13: key 'messages[0].kernel_ref.kind': must be one of deployed, builtin; got "
         "'jit'"},
        {launch_msg, 28, "        dtype: f64",
         "w.yaml:29:16: key 'messages[0].args[1].dtype': must be one of i32, i64, fp16, fp32, "
         "bool; got 'f64'"},
        {launch_msg, 29, "        value: true",
         "w.yaml:30:16: key 'messages[0].args[1].value': expected an integer, got bool true"},
        {launch_msg, 29, "        value: 3000000000",
         "w.yaml:30:16: key 'messages[0].args[1].value': 3000000000 does not fit in i32"},
        {launch_msg, 27, "        arg_kind: vector",
         "w.yaml:28:19: key 'messages[0].args[1].arg_kind': must be one of tensor, scalar; got "
         "'vector'"},
        {launch_msg, 24, "              nbytes: 0",
         "w.yaml:25:23: key 'messages[0].args[0].tensor_pa_map.shards[0].nbytes': must be > 0, "
         "got 0"},
        {launch_msg, 5, "    target_device: \"sip:0\"\n    failure_policy: retry",
         "w.yaml:7:21: key 'messages[0].failure_policy': must be one of fail_fast, collect_all; "
         "got 'retry'"},
        {launch_msg, 5, "    target_device: \"sip:0\"\n    grid: 4",
         "w.yaml:7:11: key 'messages[0].grid': expected a map or null, got int 4"},
        {launch_msg, 19, "            - 7\n            -",
         "w.yaml:20:15: key 'messages[0].args[0].tensor_pa_map.shards[0]': expected a shard map, "
         "got int 7"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *t = render(cases[i].tmpl, cases[i].line, cases[i].repl);
        cr_expect_str_eq(load_err(t), cases[i].want, "case %zu", i);
        free(t);
    }
}

Test(workload, sections_of_the_wrong_shape)
{
    const char *env = "messages:\n  - {msg_type: KernelLaunch, correlation_id: c, request_id: r, "
                      "target_device: d, ";
    char t[1024];
    snprintf(t, sizeof(t), "%skernel_ref: [vector_add], args: []}\n", env);
    cr_assert_str_eq(load_err(t),
                     "w.yaml:2:94: key 'messages[0].kernel_ref': expected a map, got list");
    snprintf(t, sizeof(t),
             "%skernel_ref: {name: k, kind: builtin, deploy_sip: 0, deploy_cube: 0, deploy_pe: "
             "0, nbytes_code: 0}, args: {a: 1}}\n",
             env);
    cr_assert_str_eq(load_err(t), "w.yaml:2:187: key 'messages[0].args': expected a list of "
                                  "kernel arguments, got map");
    snprintf(t, sizeof(t),
             "%skernel_ref: {name: k, kind: builtin, deploy_sip: 0, deploy_cube: 0, deploy_pe: "
             "0, nbytes_code: 0}, args: [{arg_kind: tensor, tensor_pa_map: {shards: []}}]}\n",
             env);
    cr_assert_str_eq(load_err(t), "w.yaml:2:231: key 'messages[0].args[0].tensor_pa_map.shards': "
                                  "a tensor needs at least one shard");
}

Test(workload, optional_fields_load)
{
    char *t = render(launch_msg, 5,
                     "    target_device: \"sip:0\"\n    timestamp_tag: t1\n    grid: {x: 4}\n"
                     "    meta: null\n    failure_policy: collect_all\n    debug_label: vadd");
    struct sim_workload *w = load_ok(t);
    free(t);
    const struct sim_host_msg *m = &w->msgs[0];
    cr_assert_str_eq(m->timestamp_tag, "t1");
    cr_assert_eq(m->u.launch.failure_policy, SIM_COLLECT_ALL);
    cr_assert_eq(sim_value_get_int(m->u.launch.grid, "x", 0), 4);
    cr_assert_null(m->u.launch.meta);
    cr_assert_str_eq(m->u.launch.debug_label, "vadd");
    sim_workload_free(w);

    t = render(write_msg, 12,
               "    pattern: {pattern_kind: zero}\n    dst_mem_kind: TCM\n    dtype: bf16\n"
               "    shape: [2, 16]");
    w = load_ok(t);
    free(t);
    const struct sim_memory_write *mw = &w->msgs[0].u.write;
    cr_assert_eq(mw->pattern.pattern_kind, SIM_PATTERN_ZERO);
    cr_assert_not(mw->pattern.has_value);
    cr_assert_eq(mw->dst_mem_kind, SIM_MEM_TCM);
    cr_assert_eq(mw->dtype, SIM_BF16);
    cr_assert_eq(mw->ndim, 2);
    cr_assert_eq(mw->shape[1], 16);
    sim_workload_free(w);
}

#define READ(corr, req)                                                                            \
    "  - {msg_type: MemoryRead, correlation_id: " corr ", request_id: " req                        \
    ", target_device: \"sip:0\", src_sip: 0, src_cube: 0, src_pe: 0, src_pa: 0, nbytes: 4}\n"

Test(workload, request_id_unique_within_correlation_id)
{
    struct sim_workload *w = load_ok("messages:\n" READ("a", "r1") READ("b", "r1") READ("a", "r2"));
    cr_assert_eq(w->n_msgs, 3);
    sim_workload_free(w);
    cr_assert_str_eq(load_err("messages:\n" READ("a", "r1") READ("b", "r1") READ("b", "r2")
                                  READ("a", "r1") READ("b", "r2")),
                     "w.yaml:5:59: key 'messages[3].request_id': request_id 'r1' is already used "
                     "in correlation_id 'a' by messages[0]");
}

Test(workload, top_level_shape)
{
    cr_assert_str_eq(load_err("[1]"), "w.yaml:1:1: a workload is a map with a 'messages' list, "
                                      "got list");
    cr_assert_str_eq(load_err("description: x\n"), "w.yaml:1:1: key 'messages': " MISSING);
    cr_assert_str_eq(load_err("messages: {a: 1}\n"),
                     "w.yaml:1:11: key 'messages': expected a list of messages, got map");
    cr_assert_str_eq(load_err("messages: []\nmesages: []\n"),
                     "w.yaml:2:1: key 'mesages': unknown field (did you mean 'messages'?)");
    cr_assert_str_eq(load_err("messages:\n  - 5\n"),
                     "w.yaml:2:5: key 'messages[0]': expected a message map, got int 5");
    cr_assert_str_eq(load_err("messages: [\n"),
                     "w.yaml:2:1: YAML syntax error: did not find expected node content while "
                     "parsing a flow node (line 2, column 1)");
    struct sim_workload *w = load_ok("description: nothing to do\nmessages: []\n");
    cr_assert_eq(w->n_msgs, 0);
    cr_assert_str_eq(w->description, "nothing to do");
    cr_assert_str_eq(w->file, "w.yaml");
    sim_workload_free(w);
}

Test(workload, host_buffer_ref_resolves_next_to_the_workload)
{
    struct sim_workload *w;
    struct diag d;
    char buf[1024];
    cr_assert_eq(sim_workload_load_file("tests/data/workloads/host_buffer.yaml", &w, &d), 0, "%s",
                 diag_format(&d, buf, sizeof(buf)));
    const struct sim_memory_write *mw = &w->msgs[0].u.write;
    cr_assert_eq(mw->src_kind, SIM_SRC_HOST_BUFFER_REF);
    cr_assert_str_eq(mw->host_buffer_ref, "input.bin");
    cr_assert_str_eq(mw->host_buffer_path, "tests/data/workloads/input.bin");
    cr_assert_eq(mw->dtype, SIM_U8); /* raw bytes unless a dtype is given */
    cr_assert_eq(mw->shape[0], 16);
    sim_workload_free(w);

    cr_assert_lt(sim_workload_load_file("tests/data/workloads/host_buffer_missing.yaml", &w, &d),
                 0);
    cr_assert_str_eq(diag_format(&d, buf, sizeof(buf)),
                     "tests/data/workloads/host_buffer_missing.yaml:7:22: key "
                     "'messages[0].host_buffer_ref': cannot read "
                     "'tests/data/workloads/no_such_input.bin': No such file or directory");
    cr_assert_str_eq(
        load_err("messages:\n  - {msg_type: MemoryWrite, correlation_id: c, request_id: r, "
                 "target_device: d, dst_sip: 0, dst_cube: 0, dst_pe: 0, dst_pa: 0, nbytes: 4, "
                 "src_kind: host_buffer_ref}\n"),
        "w.yaml:2:5: key 'messages[0].host_buffer_ref': required when src_kind is "
        "host_buffer_ref");
}

Test(workload, embedded_demo_and_smoke)
{
    struct sim_workload *w;
    struct diag d;
    char buf[1024];
    cr_assert_eq(sim_workload_load_embedded(SIM_WORKLOAD_DEMO, &w, &d), 0, "%s",
                 diag_format(&d, buf, sizeof(buf)));
    cr_assert_eq(w->n_msgs, 48);
    cr_assert_eq(w->msgs[0].msg_type, SIM_MSG_MEMORY_WRITE);
    cr_assert_eq(w->msgs[47].msg_type, SIM_MSG_MEMORY_READ);
    const char *kernels[6];
    size_t nk = 0;
    for (size_t i = 0; i < w->n_msgs; i++)
        if (w->msgs[i].msg_type == SIM_MSG_KERNEL_LAUNCH) {
            cr_assert_lt(nk, 6);
            cr_assert_eq(w->msgs[i].u.launch.kernel_ref.kind, SIM_KERNEL_BUILTIN);
            kernels[nk++] = w->msgs[i].u.launch.kernel_ref.name;
        }
    cr_assert_eq(nk, 6);
    cr_assert_str_eq(kernels[0], "vector_add");
    cr_assert_str_eq(kernels[1], "gemm");
    cr_assert_str_eq(kernels[2], "softmax");
    cr_assert_str_eq(kernels[3], "allreduce_ring");
    cr_assert_str_eq(kernels[4], "sparse_scale");
    cr_assert_str_eq(kernels[5], "llm_decode");
    /* the GEMM output is split over the four PEs of cube1, 2048 bytes each */
    const struct sim_kernel_arg *c = &w->msgs[6].u.launch.args[2];
    cr_assert_eq(c->n_shards, 4);
    for (size_t i = 0; i < 4; i++) {
        cr_assert_eq(c->shards[i].pe, (int64_t)i);
        cr_assert_eq(c->shards[i].offset_bytes, (int64_t)(2048 * i));
    }
    cr_assert_eq(w->msgs[6].u.launch.failure_policy, SIM_COLLECT_ALL);
    cr_assert_eq(w->msgs[4].u.write.dtype, SIM_F16);
    cr_assert_eq(w->msgs[4].u.write.shape[0], 64);
    struct sim_config *cfg;
    cr_assert_eq(sim_config_load_embedded(SIM_CONFIG_DEFAULT, &cfg, &d), 0);
    cr_assert_eq(sim_workload_check_chip(w, cfg, &d), 0, "%s", diag_format(&d, buf, sizeof(buf)));
    sim_config_free(cfg);
    sim_workload_free(w);

    cr_assert_eq(sim_workload_load_embedded("sim/configs/smoke.yaml", &w, &d), 0);
    cr_assert_eq(w->n_msgs, 4);
    cr_assert_eq(sim_config_load_embedded("sim/configs/tiny.yaml", &cfg, &d), 0);
    cr_assert_eq(sim_workload_check_chip(w, cfg, &d), 0);
    sim_config_free(cfg);
    sim_workload_free(w);
    cr_assert_eq(sim_workload_load_embedded("sim/configs/none.yaml", &w, &d), -SIM_ENOENT);
}

Test(workload, placement_checked_against_the_chip)
{
    struct sim_config *cfg;
    struct diag d;
    char buf[1024];
    cr_assert_eq(sim_config_load_embedded("sim/configs/tiny.yaml", &cfg, &d), 0);
    /* tiny has PEs 0 and 1 only */
    char *t = render(write_msg, 8, "    dst_pe: 2");
    struct sim_workload *w = load_ok(t);
    free(t);
    cr_assert_eq(sim_workload_check_chip(w, cfg, &d), -SIM_EINVAL);
    cr_assert_str_eq(diag_format(&d, buf, sizeof(buf)),
                     "w.yaml:3:5: key 'messages[0].dst_sip': PE (sip 0, cube 0, pe 2) is not on "
                     "the chip (1 sips x 1 cubes x 2 PEs)");
    sim_workload_free(w);
    t = render(read_msg, 5, "    target_device: \"sip:1\"");
    w = load_ok(t);
    free(t);
    cr_assert_eq(sim_workload_check_chip(w, cfg, &d), -SIM_EINVAL);
    cr_assert_str_eq(diag_format(&d, buf, sizeof(buf)),
                     "w.yaml:3:5: key 'messages[0].target_device': device 'sip:1' is not on the "
                     "chip (1 sips)");
    sim_workload_free(w);
    t = render(launch_msg, 21, "              cube: 1");
    w = load_ok(t);
    free(t);
    cr_assert_eq(sim_workload_check_chip(w, cfg, &d), -SIM_EINVAL);
    cr_assert_str_eq(d.path, "messages[0].args[0].tensor_pa_map.shards[0]");
    sim_workload_free(w);
    sim_config_free(cfg);
}

Test(workload, completion_follows_d4)
{
    struct sim_completion c;
    struct diag d;
    cr_assert_eq(sim_workload_completion_init(&c, true, NULL, NULL, &d), 0);
    cr_assert(c.ok);
    cr_assert(sim_workload_completion_valid(&c));
    sim_workload_completion_fini(&c);

    cr_assert_eq(sim_workload_completion_init(&c, false, "E_OOB", "address out of range", &d), 0);
    cr_assert_not(c.ok);
    cr_assert_str_eq(c.error_code, "E_OOB");
    cr_assert_str_eq(c.error_message, "address out of range");
    cr_assert(sim_workload_completion_valid(&c));
    sim_workload_completion_fini(&c);

    cr_assert_eq(sim_workload_completion_init(&c, false, "E_X", NULL, &d), 0);
    cr_assert(sim_workload_completion_valid(&c));
    sim_workload_completion_fini(&c);

    /* ok with an error code: refused, and the completion says why */
    cr_assert_eq(sim_workload_completion_init(&c, true, "E_X", NULL, &d), -SIM_EINVAL);
    cr_assert_str_eq(d.msg, "a successful completion must have a null error_code and "
                            "error_message (ADR-0012 D4)");
    cr_assert_not(c.ok);
    cr_assert_str_eq(c.error_code, "E_COMPLETION_INVALID");
    cr_assert(sim_workload_completion_valid(&c));
    sim_workload_completion_fini(&c);
    cr_assert_eq(sim_workload_completion_init(&c, true, NULL, "note", &d), -SIM_EINVAL);
    sim_workload_completion_fini(&c);

    /* failed without an error code: refused */
    cr_assert_eq(sim_workload_completion_init(&c, false, NULL, "oops", &d), -SIM_EINVAL);
    cr_assert_str_eq(d.msg, "a failed completion must have an error_code (ADR-0012 D4)");
    cr_assert(sim_workload_completion_valid(&c));
    sim_workload_completion_fini(&c);

    struct sim_completion bad = {.ok = true, .error_code = (char *)"x"};
    cr_assert_not(sim_workload_completion_valid(&bad));
    bad = (struct sim_completion){.ok = false};
    cr_assert_not(sim_workload_completion_valid(&bad));
}

Test(workload, response_carries_the_request_ids)
{
    char *t = render(read_msg, -1, NULL);
    struct sim_workload *w = load_ok(t);
    free(t);
    struct sim_completion c;
    sim_workload_completion_init(&c, true, NULL, NULL, NULL);
    struct sim_host_response r;
    sim_workload_response_init(&r, &w->msgs[0], &c);
    sim_workload_free(w); /* the response owns copies */
    cr_assert_str_eq(r.correlation_id, "c0");
    cr_assert_str_eq(r.request_id, "r0");
    cr_assert_eq(r.msg_type, SIM_MSG_MEMORY_READ);
    cr_assert(r.completion.ok);
    cr_assert_not(r.has_read_stats);
    sim_workload_response_fini(&r);
    cr_assert_null(r.request_id);
}

Test(workload, checksum_is_fnv1a_64)
{
    /* published FNV-1a 64-bit test vectors */
    cr_assert_eq(sim_workload_checksum("", 0), 0xcbf29ce484222325ull);
    cr_assert_eq(sim_workload_checksum("a", 1), 0xaf63dc4c8601ec8cull);
    cr_assert_eq(sim_workload_checksum("foobar", 6), 0x85944171f73967e8ull);
}

Test(workload, checksum_runs_on_a_chunk_at_a_time_and_through_zero_runs)
{
    /* bytes with zero runs of every length from 0 to 40 between non-zero ones */
    enum { N = 4096 };
    static unsigned char b[N];
    size_t at = 0;
    for (unsigned run = 0; at < N; run = (run + 1) % 41) {
        b[at++] = (unsigned char)(run * 7 + 1);
        for (unsigned k = 0; k < run && at < N; k++)
            b[at++] = 0;
    }
    uint64_t plain = 0xcbf29ce484222325ull; /* FNV-1a a byte at a time, written here */
    for (size_t i = 0; i < N; i++)
        plain = (plain ^ b[i]) * 0x100000001b3ull;
    cr_assert_eq(sim_workload_checksum(b, N), plain);
    for (size_t cut = 0; cut <= N; cut += 97) {
        uint64_t h = sim_workload_checksum(b, cut);
        cr_assert_eq(sim_workload_checksum_more(h, b + cut, N - cut), plain, "cut at %zu", cut);
    }
    static unsigned char z[N];
    uint64_t zeros = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < N; i++)
        zeros *= 0x100000001b3ull;
    cr_assert_eq(sim_workload_checksum(z, N), zeros);
}

Test(workload, names)
{
    cr_assert_str_eq(sim_workload_msg_type_name(SIM_MSG_MEMORY_WRITE), "MemoryWrite");
    cr_assert_str_eq(sim_workload_msg_type_name(SIM_MSG_KERNEL_LAUNCH), "KernelLaunch");
}
