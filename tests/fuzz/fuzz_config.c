/*
 * Fuzz harness: chip config loading (sim/chip/config.h) on arbitrary bytes must give a config
 * or a one-line diagnostic, never crash; a loaded config must build a topology whose
 * routes work. make test replays tests/fuzz/corpus/config/.
 */
#include "sim/chip/config.h"
#include "sim/chip/topology.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sim_config *cfg = NULL;
    struct diag d;
    char line[2048];
    if (sim_config_load((const char *)data, size, "fuzz.yaml", &cfg, &d)) {
        assert(!cfg);
        diag_format(&d, line, sizeof(line));
        assert(!strchr(line, '\n') && !strchr(line, '\x1b'));
        return 0;
    }
    assert(cfg->snapshot && cfg->clock_ghz > 0 && cfg->hbm.gbps > 0);
    struct sim_topo *t = sim_topo_new(cfg);
    struct sim_topo_route r;
    int last = (int)sim_topo_node_count(t) - 1;
    assert(sim_topo_route(t, 0, last, &r, NULL) == 0 && r.latency_ns > 0);
    sim_topo_route_fini(&r);
    sim_topo_free(t);
    sim_config_free(cfg);
    return 0;
}
