/*
 * Host spans as ENGINE_EVENTs. ADR-0012's messages (MemoryWrite, MemoryRead, KernelLaunch
 * and their Completions) and the io_cpu / m_cpu work they cause are control traffic, which
 * the op log does not record; the chip reports them as spans (sim/chip/chip.h, struct
 * sim_span) and the live feed writes each one as a `HOST` ENGINE_EVENT: this module says
 * on which component, under which op name and with which details (trace/FORMAT.md, "Host
 * events").
 */
#ifndef TRACE_HOSTSPAN_H
#define TRACE_HOSTSPAN_H

#include "sim/chip/chip.h"
#include "sim/chip/oppack.h"

/* The component of the host end of every host link ("host"). */
#define TRACE_HOST_COMPONENT "host"

struct sim_host_msg;

/*
 * The op name of span s: the message type for a request ("MemoryWrite", "MemoryRead",
 * "KernelLaunch") on the host link or at a CPU; "Completion" for a response crossing back
 * to the host; the name of a control message a CPU serviced ("Completion", "ReadData",
 * "Done", "Failed"). Static or borrowed from the message: valid for the call.
 */
const char *trace_hostspan_op(const struct sim_span *s);

/*
 * The request behind span s (the ADR-0012 message it carries or answers), or NULL when the
 * span carries a control message (a CPU servicing a "Done"): the caller then passes the
 * request it saw last for the span's cmdq_id to trace_hostspan_pack.
 */
const struct sim_host_msg *trace_hostspan_request(const struct sim_span *s);

/*
 * The details of span s, packed as an op record's are (sim/chip/oppack.h: the map, then an
 * empty map of replay annotations) and appended to b, so that a span costs no allocation:
 * the envelope of req (msg_type, correlation_id, request_id, target_device) when known,
 * the placement tags and sizes of the message type (MemoryWrite: dst_sip, dst_cube,
 * dst_pe, dst_pa, nbytes, src_kind; MemoryRead: src_sip, src_cube, src_pe, src_pa, nbytes;
 * KernelLaunch: kernel, shards), "bytes" that crossed the host link, and for a Completion
 * its ok and error_code. For a control message at a CPU, also "message" and its "bytes".
 */
void trace_hostspan_pack(const struct sim_span *s, const struct sim_host_msg *req,
                         struct sim_pack *b);

#endif
