/*
 * Fuzz harness: the YAML loader (sim/data/yaml.h) on arbitrary bytes must return a tree or a
 * one-line diagnostic, never crash, leak or run away; a small depth and node limit keep
 * each input cheap. make test replays tests/fuzz/corpus/yaml/.
 */
#include "sim/data/yaml.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sim_yaml_limits lim = {.max_depth = 32, .max_nodes = 1 << 14};
    struct sim_yaml_doc *doc = NULL;
    struct diag d;
    char line[2048];
    int rc = sim_yaml_load((const char *)data, size, "fuzz.yaml", &lim, &doc, &d);
    if (rc) {
        assert(!doc);
        diag_format(&d, line, sizeof(line));
        assert(!strchr(line, '\n') && !strchr(line, '\x1b'));
        return 0;
    }
    const struct sim_value *root = sim_yaml_doc_root(doc);
    assert(root);
    sim_value_free(sim_value_clone(root));
    sim_yaml_doc_free(doc);
    return 0;
}
