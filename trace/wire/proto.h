/*
 * The messages of the served-run protocol (trace/wire/PROTOCOL.md): how a viewer (npuscope
 * attach), npuscope ps and npuscope stop talk to a run served on a Unix socket. Each
 * message is one frame (trace/wire/wire.h) of a type below; this module writes their bodies
 * and reads them back, checking every field: a length beyond the limits, a count that
 * cannot fit the bytes, an enum out of range, a version from the future, all end in -1
 * with a reason, never in a crash or an allocation the message does not justify.
 *
 * Compatibility: the major version changes when a message changes meaning; a minor
 * version adds request codes, model sections and fields at the end of a message, which
 * older readers ignore.
 */
#ifndef TRACE_PROTO_H
#define TRACE_PROTO_H

#include "sim/data/tensor.h"
#include "sim/data/value.h"
#include "sim/util/diag.h"
#include "trace/wire/wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    TRACE_PROTO_MAJOR = 2, /* 2.0: a bandwidth sample names its resource */
    TRACE_PROTO_MINOR =
        2, /* 2.1: line breakpoints, call sites in the model, STEP_LINE; 2.2: energy */
    TRACE_PROTO_MAX_TO_RUN = 64 * 1024,      /* largest frame a run accepts */
    TRACE_PROTO_MAX_TO_VIEWER = 1024 * 1024, /* largest frame a viewer accepts */
    TRACE_PROTO_MAX_TEXT = 4096,             /* longest text field */
    TRACE_PROTO_MAX_PATTERN = 1024,          /* longest breakpoint pattern */
    TRACE_PROTO_MAX_BREAKS = 256,            /* breakpoints a run keeps */
    TRACE_PROTO_MAX_SPACES = 64,             /* memory spaces listed */
    TRACE_PROTO_MAX_READ = 64 * 1024,        /* bytes of a tensor read at once */
};

/* Message types: the frame's type byte. */
enum trace_msg {
    /* viewer -> run */
    TRACE_MSG_HELLO = 0x01,   /* first message: version and role */
    TRACE_MSG_REQUEST = 0x02, /* a control or a question, answered by id */
    TRACE_MSG_BYE = 0x03,     /* the viewer leaves (optional: closing says as much) */
    /* run -> viewer */
    TRACE_MSG_WELCOME = 0x81, /* answer to HELLO: version and what the run is */
    TRACE_MSG_ERROR = 0x82,   /* refused or broken: the connection closes after it */
    TRACE_MSG_MODEL = 0x83,   /* what the trace model gained (trace/wire/mirror.h) */
    TRACE_MSG_STATUS = 0x84,  /* the header's state: mode, time, events, notices */
    TRACE_MSG_BREAKS = 0x85,  /* the breakpoint list */
    TRACE_MSG_RESULT = 0x86,  /* answer to a control request */
    TRACE_MSG_DETAILS = 0x87, /* answer to DETAILS: an event's details */
    TRACE_MSG_MEMLIST = 0x88, /* answer to MEM_LIST: spaces and a space's tensors */
    TRACE_MSG_MEMREAD = 0x89, /* answer to MEM_READ: bytes of a tensor */
    TRACE_MSG_GOODBYE = 0x8A, /* the run ends: the connection closes after it */
};

/* Who connects (HELLO). */
enum trace_role {
    TRACE_ROLE_VIEWER = 1,  /* attach: receives the model and the state, sends controls */
    TRACE_ROLE_QUERY = 2,   /* ps: the WELCOME is all it wants */
    TRACE_ROLE_CONTROL = 3, /* stop: requests without the model */
};

/* Request codes. New ones come with a minor version; a run answers a code it does not
 * know with a RESULT of -SIM_ESTATE naming it, and the connection goes on. */
enum trace_req {
    TRACE_REQ_PAUSE = 1,    /* pause, or resume when paused */
    TRACE_REQ_STEP,         /* run exactly one event */
    TRACE_REQ_STEP_OP,      /* run until an op record starts or ends */
    TRACE_REQ_CONTINUE,     /* resume to the end */
    TRACE_REQ_FASTER,       /* the next speed up */
    TRACE_REQ_SLOWER,       /* the next speed down */
    TRACE_REQ_WRITE,        /* write the trace as it stands */
    TRACE_REQ_RUN_UNTIL,    /* arg[0]: a cycle */
    TRACE_REQ_BREAK_ADD,    /* kind, text: the pattern */
    TRACE_REQ_BREAK_REMOVE, /* arg[0]: its index */
    TRACE_REQ_STOP,         /* end the run (trace written) */
    TRACE_REQ_DETAILS,      /* arg[0]: an event index */
    TRACE_REQ_MEM_LIST,     /* arg[0]: a space index */
    TRACE_REQ_MEM_READ,     /* arg: space, address, byte offset, length */
    TRACE_REQ_STEP_LINE,    /* text: a PE ("" any): to its next kernel line (2.1) */
    TRACE_REQ_KNOWN,        /* the first code this version does not know */
};

/* A run's state (WELCOME, STATUS). */
enum trace_run_state {
    TRACE_RUN_RUNNING = 0,
    TRACE_RUN_PAUSED = 1,
    TRACE_RUN_FINISHED = 2,
};

struct trace_proto_hello {
    uint16_t major, minor;
    uint8_t role; /* enum trace_role */
};

struct trace_proto_welcome {
    uint16_t major, minor;
    char run_id[128];
    char name[256];  /* the workload or kernel */
    char trace[512]; /* the trace file, "" when none */
    uint64_t pid;
    uint8_t state; /* enum trace_run_state */
    uint64_t now;  /* simulated time, cycles */
    double now_ns;
    uint64_t events;  /* engine events run */
    uint64_t viewers; /* viewers attached (this one included when it is one) */
};

struct trace_proto_request {
    uint64_t id;   /* echoed in the answer */
    uint64_t code; /* enum trace_req, or a code this version does not know */
    uint64_t arg[4];
    uint8_t kind; /* BREAK_ADD: 0 component, 1 op, 2 marker, 3 metric, 4 line (2.1) */
    char text[TRACE_PROTO_MAX_PATTERN + 1]; /* BREAK_ADD: the pattern; STEP_LINE: the PE */
};

struct trace_proto_status {
    uint8_t state; /* enum trace_run_state */
    uint64_t now, events;
    double events_per_sec;
    uint64_t notice_rev;
    char notice[320];     /* "" when none; text already escaped by the run */
    char last_event[400]; /* "" when none */
    char speed[32];
    char verify[256];
    uint64_t viewers;
    uint64_t mem_gen;    /* moves when the memory store changes */
    uint64_t focus_rev;  /* moves when the run wants an op shown */
    uint64_t focus;      /* that op's event index, or UINT64_MAX */
    uint64_t breaks_rev; /* moves when the breakpoint list changes */
    char fired[400];     /* the breakpoint that paused the run and why, "" none */
};

struct trace_proto_result {
    uint64_t id;
    int64_t rc; /* 0, or a negative SIM_E* code */
    char msg[SIM_DIAG_MSG_MAX];
};

/* A tensor of a memory space, as MEMLIST lists it. */
struct trace_proto_mem_entry {
    uint64_t addr;
    uint8_t dtype; /* enum sim_dtype */
    uint8_t ndim;
    int64_t shape[SIM_MAX_DIMS];
    uint64_t nbytes;
    char writer[64];  /* who last wrote it, "" when unknown */
    double t_ns;      /* when, NaN when unknown */
    char pattern[48]; /* a pattern region's pattern ("fill 0x3c00"), "" for a tensor */
};

struct trace_proto_mem_space {
    char name[64];
    uint64_t len; /* tensors in it */
};

struct trace_proto_memlist {
    uint64_t id;
    uint64_t gen; /* the store's generation it was taken at */
    size_t nspaces;
    struct trace_proto_mem_space spaces[TRACE_PROTO_MAX_SPACES];
    uint64_t space; /* the space listed */
    bool truncated; /* more tensors than one message carries */
    size_t n;
    struct trace_proto_mem_entry *entries; /* owned (trace_proto_memlist_fini) */
};

struct trace_proto_memread {
    uint64_t id;
    uint64_t space, addr, off;
    uint64_t gen;        /* the store's generation it was read at */
    bool gone;           /* no such tensor, or the range is beyond it */
    const uint8_t *data; /* borrowed from the message */
    size_t len;
};

/* ---- writing (each appends one whole frame to b) --------------------------------------- */

void trace_proto_put_hello(struct trace_wire_buf *b, const struct trace_proto_hello *h);
void trace_proto_put_request(struct trace_wire_buf *b, const struct trace_proto_request *q);
void trace_proto_put_bye(struct trace_wire_buf *b);
void trace_proto_put_welcome(struct trace_wire_buf *b, const struct trace_proto_welcome *w);
/* code: a negative SIM_E* code. */
void trace_proto_put_error(struct trace_wire_buf *b, int code, const char *msg);
void trace_proto_put_status(struct trace_wire_buf *b, const struct trace_proto_status *s);
/* n descriptions of breakpoints (already escaped). */
void trace_proto_put_breaks(struct trace_wire_buf *b, uint64_t rev, const char *const *text,
                            size_t n);
void trace_proto_put_result(struct trace_wire_buf *b, uint64_t id, int rc, const char *msg);
/* xfers: the run's count of DRAM transfers when it answered (the viewer applies the
 * details once it holds as many, so they never arrive before the transfers they imply). */
void trace_proto_put_details(struct trace_wire_buf *b, uint64_t id, uint64_t event, uint64_t xfers,
                             const struct sim_value *details);
/* As many of the n entries as fit in about budget bytes (l->truncated set when not all). */
void trace_proto_put_memlist(struct trace_wire_buf *b, const struct trace_proto_memlist *l,
                             size_t budget);
void trace_proto_put_memread(struct trace_wire_buf *b, const struct trace_proto_memread *r);
void trace_proto_put_goodbye(struct trace_wire_buf *b, const char *reason);

/* ---- reading (each takes a frame's body; 0, or -SIM_EPARSE with d saying what) ------------- */

/* HELLO; a version whose major is not ours is refused here with what to do about it. */
int trace_proto_get_hello(const uint8_t *p, size_t n, struct trace_proto_hello *h, struct diag *d);
int trace_proto_get_request(const uint8_t *p, size_t n, struct trace_proto_request *q,
                            struct diag *d);
/* WELCOME; a run of another major version is refused here. */
int trace_proto_get_welcome(const uint8_t *p, size_t n, struct trace_proto_welcome *w,
                            struct diag *d);
/* ERROR: its code (a negative SIM_E* code) and message (truncated to size). */
int trace_proto_get_error(const uint8_t *p, size_t n, int *code, char *msg, size_t size,
                          struct diag *d);
/* GOODBYE: why the run ends (truncated to size). */
int trace_proto_get_goodbye(const uint8_t *p, size_t n, char *msg, size_t size, struct diag *d);
int trace_proto_get_status(const uint8_t *p, size_t n, struct trace_proto_status *s,
                           struct diag *d);
/* BREAKS: *text receives n new strings in one allocation (free(*text) frees them all). */
int trace_proto_get_breaks(const uint8_t *p, size_t n, uint64_t *rev, char ***text, size_t *count,
                           struct diag *d);
int trace_proto_get_result(const uint8_t *p, size_t n, struct trace_proto_result *r,
                           struct diag *d);
/* DETAILS: *details is a new tree or NULL (none). */
int trace_proto_get_details(const uint8_t *p, size_t n, uint64_t *id, uint64_t *event,
                            uint64_t *xfers, struct sim_value **details, struct diag *d);
int trace_proto_get_memlist(const uint8_t *p, size_t n, struct trace_proto_memlist *l,
                            struct diag *d);
void trace_proto_memlist_fini(struct trace_proto_memlist *l);
int trace_proto_get_memread(const uint8_t *p, size_t n, struct trace_proto_memread *r,
                            struct diag *d);

/* The name of a message type ("STATUS"), for errors; "unknown" for others. */
const char *trace_proto_msg_name(uint8_t type);

#endif
