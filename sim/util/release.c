/*
 * Big blocks freed behind (see release.h): a detached thread frees a copy of the list.
 */
#include "sim/util/release.h"

#include <pthread.h>
#include <stdlib.h>

void sim_release_add(struct sim_release *r, void *p)
{
    if (!p)
        return;
    if (r->n == SIM_RELEASE_MAX)
        free(p);
    else
        r->p[r->n++] = p;
}

static void *release_main(void *arg)
{
    struct sim_release *r = arg;
    for (size_t k = 0; k < r->n; k++)
        free(r->p[k]);
    free(r);
    return NULL;
}

void sim_release_go(struct sim_release *r, bool behind)
{
    struct sim_release *copy = behind && r->n ? malloc(sizeof(*copy)) : NULL;
    pthread_attr_t attr;
    pthread_t th;
    bool started = false;
    if (copy && pthread_attr_init(&attr) == 0) {
        *copy = *r;
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        started = pthread_create(&th, &attr, release_main, copy) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!started) {
        free(copy);
        for (size_t k = 0; k < r->n; k++)
            free(r->p[k]);
    }
    r->n = 0;
}
