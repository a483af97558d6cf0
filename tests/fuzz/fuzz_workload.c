/*
 * Fuzz harness: workload loading (sim/program/workload.h) on arbitrary bytes must give a workload
 * or a one-line diagnostic, never crash. make test replays tests/fuzz/corpus/workload/.
 */
#include "sim/program/workload.h"

#include <assert.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sim_workload *w = NULL;
    struct diag d;
    char line[2048];
    /* no directory in the name: host_buffer_ref paths stay as written */
    if (sim_workload_load((const char *)data, size, "fuzz.yaml", &w, &d)) {
        assert(!w);
        diag_format(&d, line, sizeof(line));
        assert(!strchr(line, '\n') && !strchr(line, '\x1b'));
        return 0;
    }
    for (size_t i = 0; i < w->n_msgs; i++)
        assert(w->msgs[i].correlation_id && w->msgs[i].request_id && w->msgs[i].target_device);
    sim_workload_free(w);
    return 0;
}
