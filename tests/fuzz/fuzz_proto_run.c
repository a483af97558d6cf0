/*
 * Fuzz harness for the served run's side of the protocol: any bytes, as a viewer (or
 * anyone who can reach the socket) would send them, go through the frame reader with the
 * run's limit and the HELLO and REQUEST readers, in chunks as a socket delivers them.
 * What is accepted must be what the run relies on (a version it speaks, a known role, a
 * known kind of breakpoint, a pattern without NUL within its limit, a read within its
 * limit); the buffer never holds more than a frame and a read; nothing may crash, hang or
 * leak.
 */
#include "trace/wire/proto.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_request(const struct trace_proto_request *q)
{
    if (q->code == TRACE_REQ_BREAK_ADD &&
        (q->kind > 4 || strlen(q->text) > TRACE_PROTO_MAX_PATTERN)) /* (4: a line, 2.1) */
        abort();
    if (q->code == TRACE_REQ_MEM_READ && q->arg[3] > TRACE_PROTO_MAX_READ)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct trace_wire_in in;
    trace_wire_in_init(&in, TRACE_PROTO_MAX_TO_RUN);
    bool hello = false, over = false;
    /* the first byte sets the size of the reads the socket delivers */
    size_t chunk = size ? (size_t)data[0] * 37 + 1 : 1, pos = size ? 1 : 0;
    while (pos < size && !over) {
        size_t room;
        uint8_t *p = trace_wire_in_room(&in, &room);
        size_t n = size - pos < room ? size - pos : room;
        n = n < chunk ? n : chunk;
        memcpy(p, data + pos, n);
        trace_wire_in_added(&in, n);
        pos += n;
        struct trace_wire_frame f;
        const char *why;
        int rc;
        while (!over && (rc = trace_wire_in_next(&in, &f, &why)) == 1) {
            struct diag d;
            if (!hello) {
                struct trace_proto_hello h;
                if (f.type != TRACE_MSG_HELLO || trace_proto_get_hello(f.body, f.len, &h, &d) < 0) {
                    over = true; /* an ERROR and a closed connection */
                    break;
                }
                if (h.major != TRACE_PROTO_MAJOR || h.role < TRACE_ROLE_VIEWER ||
                    h.role > TRACE_ROLE_CONTROL)
                    abort();
                hello = true;
                continue;
            }
            if (f.type == TRACE_MSG_BYE) {
                over = true;
                break;
            }
            struct trace_proto_request q;
            if (f.type != TRACE_MSG_REQUEST || trace_proto_get_request(f.body, f.len, &q, &d) < 0)
                over = true;
            else
                check_request(&q);
        }
        if (!over && rc < 0)
            over = true;
        if (in.len > TRACE_PROTO_MAX_TO_RUN + 64 * 1024 + chunk)
            abort(); /* more than a frame and a read held */
    }
    trace_wire_in_fini(&in);
    return 0;
}
