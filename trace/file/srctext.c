/*
 * Kernel sources for call sites (srctext.h).
 */
#include "trace/file/srctext.h"

#include "sim/util/embedded.h"
#include "sim/util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static struct trace_srctext *split(char *data, size_t size, const char *origin)
{
    struct trace_srctext *t = sim_xcalloc(1, sizeof(*t));
    t->data = data;
    t->size = size;
    t->origin = sim_xstrdup(origin);
    size_t cap = 0;
    for (size_t at = 0; at < size;) {
        const char *nl = memchr(data + at, '\n', size - at);
        size_t end = nl ? (size_t)(nl - data) : size;
        if (t->nlines == cap) {
            cap = cap ? 2 * cap : 256;
            t->lines = sim_xreallocarray(t->lines, cap, sizeof(*t->lines));
            t->len = sim_xreallocarray(t->len, cap, sizeof(*t->len));
        }
        size_t len = end - at;
        if (len && data[at + len - 1] == '\r')
            len--;
        t->lines[t->nlines] = data + at;
        t->len[t->nlines++] = len;
        at = end + 1;
    }
    return t;
}

static struct trace_srctext *from_disk(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct stat st;
    if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
        (unsigned long long)st.st_size > TRACE_SRCTEXT_MAX) {
        fclose(f);
        return NULL;
    }
    size_t size = (size_t)st.st_size;
    char *data = sim_xmalloc(size + 1);
    size_t got = fread(data, 1, size, f);
    fclose(f);
    data[got] = '\0';
    return split(data, got, path);
}

struct trace_srctext *trace_srctext_find(const char *base, const char *trace_dir)
{
    if (!base || !*base || strchr(base, '/') || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return NULL;
    char path[4096];
    struct trace_srctext *t = NULL;
    if (trace_dir && *trace_dir) {
        snprintf(path, sizeof(path), "%s/%s", trace_dir, base);
        t = from_disk(path);
    }
    if (!t) {
        snprintf(path, sizeof(path), "./%s", base);
        t = from_disk(path);
    }
    if (!t) {
        snprintf(path, sizeof(path), "sim/kernels/%s", base);
        const struct sim_embedded_file *e = sim_embedded_find(path);
        if (e) {
            char *data = sim_xmalloc(e->size + 1);
            memcpy(data, e->data, e->size);
            data[e->size] = '\0';
            char origin[4200];
            snprintf(origin, sizeof(origin), "built-in %s", path);
            t = split(data, e->size, origin);
        }
    }
    return t;
}

void trace_srctext_free(struct trace_srctext *t)
{
    if (!t)
        return;
    free(t->data);
    free(t->lines);
    free(t->len);
    free(t->origin);
    free(t);
}

const char *trace_srctext_line(const struct trace_srctext *t, size_t n, char *buf, size_t size)
{
    if (!t || n == 0 || n > t->nlines || size == 0)
        return NULL;
    const char *s = t->lines[n - 1];
    size_t len = t->len[n - 1], o = 0;
    for (size_t i = 0; i < len && o + 1 < size; i++) {
        if (s[i] == '\t') {
            do
                buf[o++] = ' ';
            while (o % 4 && o + 1 < size);
        } else {
            buf[o++] = s[i];
        }
    }
    buf[o] = '\0';
    return buf;
}
