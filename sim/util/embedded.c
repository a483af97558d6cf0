/* Lookup in the table of embedded files (the table itself is generated, see embedded.h). */
#include "sim/util/embedded.h"

#include <string.h>

const struct sim_embedded_file *sim_embedded_find(const char *name)
{
    for (const struct sim_embedded_file *f = sim_embedded_files; f->name; f++)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}
