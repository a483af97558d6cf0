/*
 * ThreadSanitizer driver for the Chrome export on two threads (trace/file/chrome.h; make
 * tsan): a trace of ten pieces of events and a part (each buffer of pieces used more than
 * twice), loaded, then exported on two threads with the details read from its file and
 * through the model, each file then the same bytes as the export on one thread. Exit 0 when
 * they are; any data race between the two threads makes ThreadSanitizer report and fail.
 */
#include "trace/file/chrome.h"
#include "trace/file/loader.h"

#include "scratch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EVENTS = 10 * (1 << 14) + 4099 };

static void event(FILE *f, int i)
{
    fprintf(f,
            "{\"type\":\"ENGINE_EVENT\",\"engine\":\"DMA\",\"engine_id\":%d,"
            "\"component_id\":\"sip0.cube0.pe%d.pe_dma\",\"op\":\"dma_read\","
            "\"start_cycle\":%d,\"end_cycle\":%d,\"details\":{\"nbytes\":%d,\"x\":%d.5}}",
            i % 2, i % 2, i * 10, i * 10 + 7 + i % 3, 64 * i, i);
}

/* The bytes of the file at path (NULL when it cannot be read); *n its length. */
static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0;
    *n = 0;
    for (;;) {
        if (*n == cap) {
            char *more = realloc(buf, cap = cap ? 2 * cap : 1 << 20);
            if (!more) {
                free(buf);
                return NULL;
            }
            buf = more;
        }
        size_t k = fread(buf + *n, 1, cap - *n, f);
        if (!k)
            break;
        *n += k;
    }
    fclose(f);
    return buf;
}

int main(void)
{
    struct scratch sc;
    if (!scratch_make(&sc, "chrome-tsan"))
        return 1;
    char one[160], two[160];
    snprintf(one, sizeof(one), "%s/one.json", sc.dir);
    snprintf(two, sizeof(two), "%s/two.json", sc.dir);
    int status = 1;
    struct trace_model *m = NULL;
    struct diag d;
    if (scratch_write_events(sc.path, EVENTS, event) != 0 ||
        trace_load_file(sc.path, NULL, &m, &d) < 0) {
        fprintf(stderr, "chrome_tsan: no trace\n");
        goto out;
    }
    for (int via_file = 0; via_file < 2; via_file++) {
        const char *src = via_file ? sc.path : NULL;
        size_t na = 0, nb = 0;
        char *a = NULL, *b = NULL;
        bool same = trace_chrome_export_with(m, src, one, 0, 1, NULL, &d) == 0 &&
                    trace_chrome_export_with(m, src, two, 0, 2, NULL, &d) == 0 &&
                    (a = slurp(one, &na)) && (b = slurp(two, &nb)) && na == nb &&
                    memcmp(a, b, na) == 0;
        free(a);
        free(b);
        if (!same) {
            fprintf(stderr,
                    "chrome_tsan: the export on two threads differs (details from the %s)\n",
                    via_file ? "file" : "model");
            goto out;
        }
    }
    printf("chrome_tsan: %d events exported on two threads, the same bytes as on one\n", EVENTS);
    status = 0;
out:
    trace_model_free(m);
    if (!scratch_remove(&sc))
        status = 1;
    return status;
}
