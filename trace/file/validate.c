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
