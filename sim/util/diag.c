/* Diagnostics: filling and formatting struct diag (see diag.h). */
#include "sim/util/diag.h"

#include "sim/util/escape.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void diag_clear(struct diag *d)
{
    if (d)
        memset(d, 0, sizeof(*d));
}

int diag_set(struct diag *d, enum sim_err code, const char *file, int line, int col,
             const char *path, const char *fmt, ...)
{
    if (d) {
        snprintf(d->file, sizeof(d->file), "%s", file ? file : "");
        d->line = line;
        d->col = col;
        snprintf(d->path, sizeof(d->path), "%s", path ? path : "");
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
        va_end(ap);
    }
    return -(int)code;
}

void diag_prefix(struct diag *d, const char *fmt, ...)
{
    if (!d)
        return;
    char pre[SIM_DIAG_MSG_MAX], old[SIM_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof(pre), fmt, ap);
    va_end(ap);
    memcpy(old, d->msg, sizeof(old));
    /* truncation of an over-long message is intended */
    if (snprintf(d->msg, sizeof(d->msg), "%s: %s", pre, old) >= (int)sizeof(d->msg))
        d->msg[sizeof(d->msg) - 1] = '\0';
}

char *diag_format(const struct diag *d, char *buf, size_t size)
{
    char file[SIM_DIAG_FILE_MAX * 2], path[SIM_DIAG_PATH_MAX * 2], msg[SIM_DIAG_MSG_MAX * 2];
    sim_escape(d->file, strlen(d->file), file, sizeof(file));
    sim_escape(d->path, strlen(d->path), path, sizeof(path));
    sim_escape(d->msg, strlen(d->msg), msg, sizeof(msg));
    char where[sizeof(file) + 32] = "";
    if (file[0] && d->line > 0 && d->col > 0)
        snprintf(where, sizeof(where), "%s:%d:%d: ", file, d->line, d->col);
    else if (file[0] && d->line > 0)
        snprintf(where, sizeof(where), "%s:%d: ", file, d->line);
    else if (file[0])
        snprintf(where, sizeof(where), "%s: ", file);
    if (path[0] && d->line > 0)
        snprintf(buf, size, "%skey '%s': %s", where, path, msg);
    else if (path[0])
        snprintf(buf, size, "%s%s: %s", where, path, msg);
    else
        snprintf(buf, size, "%s%s", where, msg);
    return buf;
}
