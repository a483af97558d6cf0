/*
 * A scratch directory for a ThreadSanitizer program (tests/tsan/): made under /tmp, with the
 * path of the trace the program writes in it and $XDG_CACHE_HOME pointed inside (an index or
 * a kept verdict is written there), removed at the end.
 */
#ifndef TESTS_TSAN_SCRATCH_H
#define TESTS_TSAN_SCRATCH_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

struct scratch {
    char dir[64];   /* the directory */
    char path[128]; /* dir/t.json: the trace's path */
};

/* Make s's directory (named after name), its trace's path and its cache: false when the
 * directory cannot be made. */
static inline bool scratch_make(struct scratch *s, const char *name)
{
    char cache[128];
    snprintf(s->dir, sizeof(s->dir), "/tmp/npuscope-%s.XXXXXX", name);
    if (!mkdtemp(s->dir))
        return false;
    snprintf(s->path, sizeof(s->path), "%s/t.json", s->dir);
    snprintf(cache, sizeof(cache), "%s/cache", s->dir);
    setenv("XDG_CACHE_HOME", cache, 1);
    return true;
}

/* Write a trace of n engine events to path, event(f, i) printing the i-th's object: 0, or -1
 * when the file cannot be written. */
static inline int scratch_write_events(const char *path, int n, void (*event)(FILE *, int))
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "{\"version\": \"1.0\", \"timeline_events\": [\n");
    for (int i = 0; i < n; i++) {
        fputs(i ? ",\n" : "", f);
        event(f, i);
    }
    fprintf(f, "]}\n");
    return fclose(f);
}

/* Remove s's directory and all in it: false when that failed. */
static inline bool scratch_remove(const struct scratch *s)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->dir);
    return system(cmd) == 0;
}

#endif
