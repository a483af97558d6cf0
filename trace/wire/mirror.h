/*
 * A trace model mirrored over the wire (trace/wire/PROTOCOL.md, "The model"): a served run
 * sends each viewer what its model gained since the viewer last heard (strings, tracks,
 * call sites, events and their sites, the ends of events in flight, transfers, memory accesses,
 * tokens, markers, bandwidth samples, "now", the energy and its power samples), and the viewer
 * applies it to a model of its own, which then looks to the panes exactly like the run's.
 * Everything in a trace model only grows while a run goes forward, so a sender keeps nothing but
 * how far each list was sent (and which events it sent in flight): a viewer that fell behind gets
 * everything since in its next message, coarser but complete, and the sender's memory does not grow
 * with the backlog.
 *
 * The receiving side checks every index against what it holds before touching the model,
 * so a broken or hostile peer gets an error, never a failed assertion.
 */
#ifndef TRACE_MIRROR_H
#define TRACE_MIRROR_H

#include "sim/util/diag.h"
#include "trace/model/model.h"
#include "trace/wire/wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How far a model was sent to one viewer. Zero-initialise; trace_mirror_tx_fini frees. */
struct trace_mirror_tx {
    bool head_sent;     /* run_metadata and config_snapshot */
    uint32_t nstr;      /* string ids [0, nstr) sent (id 0 needs no sending) */
    uint32_t ntracks;   /* tracks sent */
    uint32_t nsites;    /* call site ids [0, nsites) sent (0 and 1: none yet) */
    uint64_t nev;       /* events sent */
    uint64_t *inflight; /* owned: events sent while in flight, not yet sent ended */
    size_t ninflight, capinflight;
    size_t nxf, nmem, ntok, nmk, nbw; /* transfers, memory accesses, tokens, markers, samples */
    uint64_t now;                     /* "now" sent */
    bool now_sent;
    /* samples changed after they were sent: those whose change count is above bw_from are
     * sent again, in passes over [0, nbw) (bw_scan: where this pass is) */
    uint64_t bw_from, bw_upto; /* changes covered: sent up to bw_from; this pass to bw_upto */
    size_t bw_scan;
    uint64_t energy_gen;  /* the model's energy generation last sent (0: none yet) */
    uint64_t *power_hash; /* owned: a hash of each power sample as last sent, so that only */
    size_t npower_hash, cappower_hash; /* those that changed are sent again */
};

void trace_mirror_tx_fini(struct trace_mirror_tx *tx);

/* True when m holds something tx has not sent. */
bool trace_mirror_pending(const struct trace_mirror_tx *tx, const struct trace_model *m);

/*
 * Append to out the body of a model message carrying what m gained since tx (in the order
 * the receiver needs: strings before what names them, events before their ends), stopping
 * once about budget bytes were added; tx moves on by what was written. Returns true when
 * everything was sent, false when some is left for the next message. Writes nothing when
 * nothing is pending.
 */
bool trace_mirror_encode(struct trace_mirror_tx *tx, const struct trace_model *m,
                         struct trace_wire_buf *out, size_t budget);

/*
 * Apply the body of a model message (len bytes at p) to m, a model filled only by this
 * function, then bring its indexes up to date (trace_model_finish). Returns 0, or
 * -SIM_EPARSE with d saying what was wrong (malformed bytes, or an index, a count or a
 * time that does not fit the model); m then holds what came before the fault, consistent
 * but incomplete, and the connection is to be dropped.
 */
int trace_mirror_apply(struct trace_model *m, const uint8_t *p, size_t len, struct diag *d);

#endif
