/*
 * The wire encoding of the served-run protocol (trace/wire/PROTOCOL.md): frames of a 4-byte
 * little-endian length and a type byte, and inside them a few primitives (LEB128 varints,
 * zigzag for signed values, IEEE doubles, length-prefixed byte strings, value trees). The
 * writer appends to a growable buffer; the reader checks every byte it takes against the
 * frame's end and remembers the first failure, so a decoder reads a whole message and
 * asks once whether it was well formed. Nothing here allocates more than the bytes it was
 * given justify.
 */
#ifndef TRACE_WIRE_H
#define TRACE_WIRE_H

#include "sim/data/value.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    TRACE_WIRE_HEADER = 5,       /* length (4) + type (1) */
    TRACE_WIRE_VALUE_DEPTH = 32, /* deepest value tree accepted */
};

/* A growable byte buffer (zero-initialise; trace_wire_buf_fini frees it). */
struct trace_wire_buf {
    uint8_t *p; /* owned */
    size_t len, cap;
};

void trace_wire_buf_fini(struct trace_wire_buf *b);
/* Drop the first n bytes (written to a socket). */
void trace_wire_buf_consume(struct trace_wire_buf *b, size_t n);

/* Start a frame of type at the end of b; returns where it starts, for frame_end. */
size_t trace_wire_frame_begin(struct trace_wire_buf *b, uint8_t type);
/* Finish the frame started at start: its length field is filled in. Returns the frame's
 * size in bytes (header included). */
size_t trace_wire_frame_end(struct trace_wire_buf *b, size_t start);

void trace_wire_put_u8(struct trace_wire_buf *b, uint8_t v);
void trace_wire_put_u16(struct trace_wire_buf *b, uint16_t v); /* little-endian */
void trace_wire_put_uv(struct trace_wire_buf *b, uint64_t v);  /* LEB128 */
void trace_wire_put_sv(struct trace_wire_buf *b, int64_t v);   /* zigzag LEB128 */
void trace_wire_put_f64(struct trace_wire_buf *b, double v);
void trace_wire_put_bytes(struct trace_wire_buf *b, const void *p, size_t n); /* length first */
void trace_wire_put_str(struct trace_wire_buf *b, const char *s);             /* NULL as "" */
void trace_wire_put_raw(struct trace_wire_buf *b, const void *p, size_t n);   /* no length */
/* A value tree (NULL as null; tensors as null: their data never travels this way). */
void trace_wire_put_value(struct trace_wire_buf *b, const struct sim_value *v);

/*
 * Reading one frame's body. Every get returns a zero value once the reader has failed (a
 * truncated field, an overlong varint, a length beyond the end); trace_wire_rd_ok says
 * whether everything so far was well formed, and what names the first problem.
 */
struct trace_wire_rd {
    const uint8_t *p;
    size_t n, pos;
    const char *what; /* the first problem, or NULL */
};

void trace_wire_rd_init(struct trace_wire_rd *r, const void *p, size_t n);
bool trace_wire_rd_ok(const struct trace_wire_rd *r);
/* Fail the reader with a reason (a static string), unless it failed already. Returns false. */
bool trace_wire_rd_fail(struct trace_wire_rd *r, const char *what);
/* Bytes left. */
size_t trace_wire_rd_left(const struct trace_wire_rd *r);

uint8_t trace_wire_get_u8(struct trace_wire_rd *r);
uint16_t trace_wire_get_u16(struct trace_wire_rd *r);
uint64_t trace_wire_get_uv(struct trace_wire_rd *r);
int64_t trace_wire_get_sv(struct trace_wire_rd *r);
double trace_wire_get_f64(struct trace_wire_rd *r);
/* A length-prefixed byte string: borrowed from the frame (*len bytes, not NUL-terminated),
 * NULL on failure. max bounds the length (longer fails the reader). */
const uint8_t *trace_wire_get_bytes(struct trace_wire_rd *r, size_t max, size_t *len);
/* The same as a new NUL-terminated string (the caller frees it); NULL on failure. */
char *trace_wire_get_str(struct trace_wire_rd *r, size_t max);
/* n raw bytes, borrowed; NULL on failure. */
const uint8_t *trace_wire_get_raw(struct trace_wire_rd *r, size_t n);
/* A value tree (the caller frees it): at most TRACE_WIRE_VALUE_DEPTH deep, map keys
 * without NUL bytes. NULL for a null value or on failure (check trace_wire_rd_ok). */
struct sim_value *trace_wire_get_value(struct trace_wire_rd *r);
/* Skip a value tree. */
void trace_wire_skip_value(struct trace_wire_rd *r);

/*
 * Reassembling frames from a byte stream. Bytes are appended with in_append (at most
 * in_room at a time); in_next finds the next complete frame. The buffer never holds more
 * than one frame of at most max_frame bytes plus what the last read brought.
 */
struct trace_wire_in {
    uint8_t *p; /* owned */
    size_t len, cap;
    size_t max_frame; /* largest frame accepted, header included */
    size_t drop;      /* bytes of the frame last returned, dropped at the next call */
};

void trace_wire_in_init(struct trace_wire_in *in, size_t max_frame);
void trace_wire_in_fini(struct trace_wire_in *in);
/* Room for the next read: a pointer to write into and how many bytes fit (> 0). */
uint8_t *trace_wire_in_room(struct trace_wire_in *in, size_t *room);
/* n bytes were written at the room. */
void trace_wire_in_added(struct trace_wire_in *in, size_t n);

/* A frame out of the stream. */
struct trace_wire_frame {
    uint8_t type;
    const uint8_t *body; /* borrowed: valid until the next in_next or in_room */
    size_t len;
};

/* True when in_next has something to say without more bytes (a frame, or a broken
 * stream). */
bool trace_wire_in_ready(const struct trace_wire_in *in);

/*
 * The next complete frame: 1 and *f (its bytes are dropped from the buffer at the next
 * call), 0 when more bytes are needed, or -1 when the stream is broken: a declared length
 * of 0 or beyond max_frame (*why says which). A broken stream cannot be resumed.
 */
int trace_wire_in_next(struct trace_wire_in *in, struct trace_wire_frame *f, const char **why);

#endif
