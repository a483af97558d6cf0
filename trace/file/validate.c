/* Checking a trace file (see validate.h): the checks themselves run in loader.c. */
#include "trace/file/validate.h"

#include "trace/file/loader.h"

int trace_validate_file(const char *path, struct trace_report *r, struct trace_model **model_out,
                        struct diag *d)
{
    struct trace_model *m = NULL;
    int rc = trace_load_file(path, r, &m, d);
    if (model_out)
        *model_out = m;
    else
        trace_model_free(m);
    return rc;
}

int trace_validate_stream(const char *path, struct trace_report *r, struct trace_model **light,
                          uint64_t *records, struct diag *d)
{
    uint64_t checked = 0;
    struct trace_load_opts o = {.check_only = true, .checked = &checked};
    *records = 0;
    int rc = trace_load_file_opts(path, &o, r, light, NULL, d);
    if (rc == 0)
        *records = checked + trace_model_event_count(*light) + trace_model_token_count(*light) +
                   trace_model_marker_count(*light) + trace_model_mem_access_count(*light);
    return rc;
}
