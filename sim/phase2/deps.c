/*
 * Dependencies between the ops of a chunk (see exec_int.h): conflicts of their read and
 * write ranges (RAW, WAR, WAW) and the levels of the longest path over them, which are the
 * waves.
 */
#include "sim/phase2/exec_int.h"

#include "sim/util/xalloc.h"

bool sim_exec_overlaps(const struct range *a, const struct range *b)
{
    return a->sid == b->sid && a->lo < b->hi && b->lo < a->hi;
}

/* RAW, WAR or WAW between two ops. */
bool sim_exec_conflict(const struct xop *a, const struct xop *b)
{
    if (sim_exec_overlaps(&a->write, &b->write))
        return true;
    for (unsigned i = 0; i < b->n_reads; i++)
        if (sim_exec_overlaps(&a->write, &b->reads[i]))
            return true;
    for (unsigned i = 0; i < a->n_reads; i++)
        if (sim_exec_overlaps(&b->write, &a->reads[i]))
            return true;
    return false;
}

/* Levels by longest path over the predecessor lists; -1 on a cycle. */
int sim_exec_level_chunk(struct run *R, size_t g)
{
    for (size_t j = 0; j < g; j++)
        R->order[j]->level = 0;
    for (size_t pass = 0; pass <= g; pass++) {
        bool changed = false;
        for (size_t j = 0; j < g; j++) {
            unsigned lv = R->order[j]->level;
            for (size_t q = 0; q < R->n_preds[j]; q++) {
                unsigned pl = R->order[R->preds[j][q]]->level + 1;
                if (pl > lv)
                    lv = pl;
            }
            if (lv != R->order[j]->level) {
                R->order[j]->level = lv;
                changed = true;
            }
        }
        if (!changed)
            return 0;
    }
    return -1;
}

void sim_exec_add_pred(struct run *R, size_t j, size_t i)
{
    if (R->n_preds[j] == R->cap_preds[j]) {
        R->cap_preds[j] = R->cap_preds[j] ? 2 * R->cap_preds[j] : 8;
        R->preds[j] = sim_xreallocarray(R->preds[j], R->cap_preds[j], sizeof(size_t));
    }
    R->preds[j][R->n_preds[j]++] = i;
}
