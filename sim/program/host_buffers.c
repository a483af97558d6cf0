/* The host buffers (see host_buffers.h): a short list searched by name. */
#include "sim/program/host_buffers.h"

#include "sim/util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct hbuf {
    char *name;
    struct sim_tensor *t;
};

struct sim_host_buffers {
    struct hbuf *v;
    size_t n, cap;
};

struct sim_host_buffers *sim_host_buffers_new(void)
{
    return sim_xcalloc(1, sizeof(struct sim_host_buffers));
}

void sim_host_buffers_free(struct sim_host_buffers *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++) {
        free(b->v[i].name);
        sim_tensor_unref(b->v[i].t);
    }
    free(b->v);
    free(b);
}

void sim_host_buffers_add(struct sim_host_buffers *b, const char *name, struct sim_tensor *t)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 8;
        b->v = sim_xreallocarray(b->v, b->cap, sizeof(*b->v));
    }
    b->v[b->n++] = (struct hbuf){sim_xstrdup(name), sim_tensor_ref(t)};
}

struct sim_tensor *sim_host_buffers_find(const struct sim_host_buffers *b, const char *name)
{
    for (size_t i = 0; b && i < b->n; i++)
        if (strcmp(b->v[i].name, name) == 0)
            return b->v[i].t;
    return NULL;
}
