/*
 * The model shapes llm_decode's model= names: presets of public models (their published
 * config.json values, cited in sim/kernels/README.md) or a Hugging Face config.json read
 * with cJSON. Only the shape is taken (width, heads, KV heads, MLP width, layers, dtype):
 * the weights are generated as for any other run.
 */
#include "sim/kernels/kernels.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct sim_llm_model presets[] = {
    /* name, dim, heads, kv_heads, ff, layers, dtype */
    {"llama-2-7b", 4096, 32, 32, 11008, 32, SIM_F16},
    {"llama-2-13b", 5120, 40, 40, 13824, 40, SIM_F16},
    {"llama-3-8b", 4096, 32, 8, 14336, 32, SIM_BF16},
    {"mistral-7b", 4096, 32, 8, 14336, 32, SIM_BF16},
    {"qwen2-7b", 3584, 28, 4, 18944, 28, SIM_BF16},
    {"tinyllama-1.1b", 2048, 32, 4, 5632, 22, SIM_F32},
};

#define N_PRESETS (sizeof(presets) / sizeof(presets[0]))

/* Case-insensitive equality, so Llama-2-7B and llama-2-7b name the same preset. */
static bool same_name(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char y = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
        if (x != y)
            return false;
    }
    return *a == *b;
}

const struct sim_llm_model *sim_llm_preset(const char *name)
{
    for (size_t i = 0; i < N_PRESETS; i++)
        if (same_name(presets[i].name, name))
            return &presets[i];
    return NULL;
}

char *sim_llm_preset_names(char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_PRESETS && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", presets[i].name);
    return buf;
}

/* Integer field key of a config: a whole number >= 1. */
static int int_field(const cJSON *root, const char *path, const char *key, int64_t *out,
                     bool optional, struct diag *d)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!j || cJSON_IsNull(j)) {
        if (optional)
            return 0;
        return diag_set(d, SIM_EINVAL, path, 0, 0, key,
                        "missing (a model's config gives hidden_size, "
                        "num_attention_heads, intermediate_size and num_hidden_layers)");
    }
    double v = cJSON_IsNumber(j) ? j->valuedouble : 0;
    if (!cJSON_IsNumber(j) || v != (double)(int64_t)v || v < 1 || v > 1e9)
        return diag_set(d, SIM_EINVAL, path, 0, 0, key, "must be a whole number from 1 to 1e9");
    *out = (int64_t)v;
    return 0;
}

static int read_config(const char *path, struct sim_llm_model *m, struct diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return diag_set(d, SIM_ENOENT, path, 0, 0, NULL,
                        "cannot read: %s (-k llm_decode:model= takes a preset: %s, or a "
                        "config.json)",
                        strerror(errno), sim_llm_preset_names((char[160]){0}, 160));
    enum { MAX = 1 << 20 };
    char *text = malloc(MAX + 1);
    size_t n = text ? fread(text, 1, MAX + 1, f) : 0;
    bool err = ferror(f) != 0;
    fclose(f);
    if (!text || err || n > MAX) {
        free(text);
        return diag_set(d, SIM_EINVAL, path, 0, 0, NULL,
                        err ? "cannot read the model's config"
                            : "the model's config is over 1 MiB");
    }
    text[n] = '\0';
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, n, &end, false);
    if (!root || !cJSON_IsObject(root)) {
        size_t at = root ? 0 : end ? (size_t)(end - text) : 0;
        cJSON_Delete(root);
        free(text);
        return diag_set(d, SIM_EINVAL, path, 0, 0, NULL,
                        root ? "not a model config: a JSON object is expected"
                             : "not JSON (stops at byte %zu)",
                        at);
    }
    free(text);
    int rc;
    m->kv_heads = 0;
    if ((rc = int_field(root, path, "hidden_size", &m->dim, false, d)) < 0 ||
        (rc = int_field(root, path, "num_attention_heads", &m->heads, false, d)) < 0 ||
        (rc = int_field(root, path, "num_key_value_heads", &m->kv_heads, true, d)) < 0 ||
        (rc = int_field(root, path, "intermediate_size", &m->ff, false, d)) < 0 ||
        (rc = int_field(root, path, "num_hidden_layers", &m->layers, false, d)) < 0) {
        cJSON_Delete(root);
        return rc;
    }
    /* as transformers reads it: no num_key_value_heads is multi-head attention, no
     * torch_dtype float32 */
    if (!m->kv_heads)
        m->kv_heads = m->heads;
    m->dtype = SIM_F32;
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(root, "torch_dtype");
    if (dt && !cJSON_IsNull(dt)) {
        const char *s = cJSON_IsString(dt) ? dt->valuestring : "";
        if (strcmp(s, "float32") == 0)
            m->dtype = SIM_F32;
        else if (strcmp(s, "float16") == 0)
            m->dtype = SIM_F16;
        else if (strcmp(s, "bfloat16") == 0)
            m->dtype = SIM_BF16;
        else {
            rc = diag_set(d, SIM_EINVAL, path, 0, 0, "torch_dtype",
                          "must be float32, float16 or bfloat16");
            cJSON_Delete(root);
            return rc;
        }
    }
    cJSON_Delete(root);
    if (m->dim % m->heads)
        return diag_set(d, SIM_EINVAL, path, 0, 0, "num_attention_heads",
                        "%lld does not divide hidden_size %lld", (long long)m->heads,
                        (long long)m->dim);
    if (m->heads % m->kv_heads)
        return diag_set(d, SIM_EINVAL, path, 0, 0, "num_key_value_heads",
                        "%lld does not divide num_attention_heads %lld", (long long)m->kv_heads,
                        (long long)m->heads);
    m->name = NULL;
    return 0;
}

int sim_llm_model_load(const char *spec, struct sim_llm_model *out, struct diag *d)
{
    const struct sim_llm_model *p = sim_llm_preset(spec);
    if (p) {
        *out = *p;
        return 0;
    }
    /* a word without a path separator or .json is a preset name, misspelt */
    if (!strchr(spec, '/') && !strstr(spec, ".json")) {
        char names[160];
        return diag_set(d, SIM_EINVAL, NULL, 0, 0, NULL,
                        "-k llm_decode: key 'model': no preset '%s' (presets: %s; or the path of "
                        "a config.json)",
                        spec, sim_llm_preset_names(names, sizeof(names)));
    }
    return read_config(spec, out, d);
}
