/*
 * Roles of memory regions: which ranges of a memory space hold a tensor with a role the
 * trace names ("kv": a KV cache, the trace format's details.tensor_role), so that the op
 * record of every DMA op touching one says so, however the kernel computed its address.
 * A kernel launch tags its arguments' shards from the kernel's argument table and drops
 * its tags when it is answered; the op log looks ranges up (sim/chip/oplog.h).
 */
#ifndef SIM_ROLES_H
#define SIM_ROLES_H

#include <stddef.h>
#include <stdint.h>

struct sim_roles;

/* An empty table. Free with sim_roles_free (NULL is a no-op). */
struct sim_roles *sim_roles_new(void);
void sim_roles_free(struct sim_roles *r);

/*
 * Tag [addr, addr + nbytes) of space ("hbm", "tcm", ...) with role, on behalf of owner (a
 * launch's cmdq_id). space and role are copied (a few distinct ones: interned). An empty
 * range tags nothing. A tag of owner -1 is kept until one of the same range replaces it.
 */
void sim_roles_tag(struct sim_roles *r, const char *space, uint64_t addr, uint64_t nbytes,
                   const char *role, int64_t owner);

/* Drop every tag of owner. */
void sim_roles_drop(struct sim_roles *r, int64_t owner);

/* The role of a tagged range of space that [addr, addr + nbytes) overlaps (the latest tag
 * when several do), or NULL. Borrowed: valid until the table is freed. */
const char *sim_roles_find(const struct sim_roles *r, const char *space, uint64_t addr,
                           uint64_t nbytes);

/* Number of tags. */
size_t sim_roles_count(const struct sim_roles *r);

#endif
