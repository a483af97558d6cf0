/*
 * Making untrusted text safe to print. Strings from trace files, configs and workloads
 * come from other people: before any of them reaches a terminal (a report on stderr, a
 * cell of the TUI) it goes through here. C0 and C1 controls, DEL, bidi overrides and
 * zero-width characters become visible escapes (\e, \n, \x7f, \u202e); invalid UTF-8
 * becomes U+FFFD. Printable UTF-8 passes unchanged.
 */
#ifndef SIM_ESCAPE_H
#define SIM_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Decode one UTF-8 sequence from s (n bytes available). Returns the number of bytes
 * consumed (>= 1 when n >= 1) and stores the code point in *cp, or U+FFFD with 1 byte
 * consumed for an invalid, overlong, surrogate or truncated sequence.
 */
size_t sim_utf8_decode(const char *s, size_t n, uint32_t *cp);

/* Encode cp (<= 0x10FFFF) as UTF-8 into out (4 bytes room); returns the byte count. */
size_t sim_utf8_encode(uint32_t cp, char *out);

/* True when cp must not reach a terminal as itself (controls, bidi, zero-width...). */
bool sim_escape_needed(uint32_t cp);

/*
 * Write the escaped form of cp (e.g. "\e", "\x07", "\u202e") into out (at least 11 bytes);
 * returns its length. Only meaningful when sim_escape_needed(cp).
 */
size_t sim_escape_cp(uint32_t cp, char *out);

/*
 * Escape the n bytes of in into out (size bytes, always NUL-terminated when size > 0).
 * Output is truncated at a character boundary when out is too small. Returns the length
 * the full escaped string would have (like snprintf).
 */
size_t sim_escape(const char *in, size_t n, char *out, size_t size);

/* sim_escape of a NUL-terminated string into a fresh allocation (caller frees). */
char *sim_escape_dup(const char *s);

#endif
