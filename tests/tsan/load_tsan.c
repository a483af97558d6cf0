/*
 * ThreadSanitizer driver for the loader's second thread (trace/file/pparse.h; make tsan): a
 * trace of many batches, with elements the worker refuses (nested too deep, a bad escape)
 * so that it stops and starts again, and with half of its ENGINE_EVENTs in the writer's
 * shape (read directly, trace/file/evread.h, every other one's op columns decoded by the
 * worker), is loaded on two threads and on one; the models and reports must agree. Exit 0
 * when they do; any data race makes ThreadSanitizer report and fail the run.
 */
#include "trace/file/loader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *text_of(size_t *len)
{
    char *text;
    FILE *f = open_memstream(&text, len);
    fprintf(f, "{\"version\": \"1.0\", \"timeline_events\": [\n");
    for (int i = 0; i < 20000; i++) {
        if (i)
            fprintf(f, ",\n");
        if (i % 5000 == 77) {
            fprintf(f, "{\"type\": \"ENGINE_EVENT\", \"details\": ");
            for (int k = 0; k < 1100; k++)
                fputc('[', f);
            for (int k = 0; k < 1100; k++)
                fputc(']', f);
            fputc('}', f);
        } else if (i % 7000 == 11) {
            fprintf(f, "{\"type\": \"ENGINE_EVENT\", \"op\": \"\\uDD00\"}");
        } else if (i % 2 == 0) { /* the writer's shape: read directly by the worker */
            fprintf(f,
                    "{\"type\":\"ENGINE_EVENT\",\"engine\":\"TE\",\"engine_id\":%d,"
                    "\"cmdq_id\":null,\"layer_id\":null,\"tile_id\":null,\"op\":\"OP%d\","
                    "\"start_cycle\":%d,\"end_cycle\":%d,\"details\":{\"m\":%d,\"name\":\"n%d\"}}",
                    i % 3, i % 11, i * 4, i % 13 == 0 ? 1 : i * 4 + 3, i, i);
        } else {
            fprintf(f,
                    "{\"type\": \"ENGINE_EVENT\", \"engine\": \"TE\", \"engine_id\": %d, "
                    "\"op\": \"OP%d\", \"start_cycle\": %d, \"end_cycle\": %d, "
                    "\"details\": {\"m\": %d, \"name\": \"n%d\"}}",
                    i % 3, i % 11, i * 4, i % 13 == 0 ? -1 : i * 4 + 3, i, i);
        }
    }
    fprintf(f, "]}\n");
    fclose(f);
    return text;
}

static int load(const char *path, int threads, uint64_t *events, uint64_t *errors)
{
    struct trace_report *r = trace_report_new(10);
    struct trace_model *m;
    struct diag d;
    struct trace_load_opts o = {.threads = threads};
    if (trace_load_file_opts(path, &o, r, &m, NULL, &d) < 0) {
        fprintf(stderr, "load_tsan: %s\n", d.msg);
        return -1;
    }
    *events = trace_model_event_count(m);
    *errors = trace_report_errors(r);
    trace_model_free(m);
    trace_report_free(r);
    return 0;
}

int main(void)
{
    size_t len;
    char *text = text_of(&len);
    char path[] = "/tmp/npuscope-load-tsan.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, len) != (ssize_t)len)
        return 1;
    close(fd);
    free(text);
    uint64_t e1, r1, e2, r2;
    setenv("NPUSCOPE_LOAD_OPINFO", "2", 1); /* the worker decodes every other op's columns */
    int rc = load(path, 1, &e1, &r1) < 0 || load(path, 2, &e2, &r2) < 0;
    unlink(path);
    if (rc || e1 != e2 || r1 != r2 || r1 == 0) {
        fprintf(stderr, "load_tsan: one thread %llu events %llu errors, two %llu and %llu\n",
                (unsigned long long)e1, (unsigned long long)r1, (unsigned long long)e2,
                (unsigned long long)r2);
        return 1;
    }
    printf("load_tsan: %llu events, %llu errors on one and two threads\n", (unsigned long long)e1,
           (unsigned long long)r1);
    return 0;
}
