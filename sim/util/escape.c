/* UTF-8 decoding and escaping of untrusted text before it reaches a terminal. */
#include "sim/util/escape.h"

#include "sim/util/xalloc.h"

#include <stdio.h>
#include <string.h>

size_t sim_utf8_decode(const char *s, size_t n, uint32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    *cp = 0xFFFD;
    if (n == 0)
        return 0;
    unsigned char c = u[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len;
    uint32_t v, min;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2, v = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3, v = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 1;
    }
    if (n < len)
        return 1;
    for (size_t i = 1; i < len; i++) {
        if ((u[i] & 0xC0) != 0x80)
            return 1;
        v = (v << 6) | (u[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
        return 1;
    *cp = v;
    return len;
}

size_t sim_utf8_encode(uint32_t cp, char *out)
{
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

bool sim_escape_needed(uint32_t cp)
{
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
        return true; /* C0, DEL, C1 (CSI, OSC, ST...) */
    if (cp == '\\')
        return true; /* so an escape in the output is never ambiguous */
    if ((cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
        (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x206F) || cp == 0xFEFF ||
        cp == 0x061C || cp == 0x180E || cp == 0x00AD)
        return true; /* zero-width, bidi controls and overrides, BOM, soft hyphen */
    if ((cp >= 0xFFF9 && cp <= 0xFFFB) || (cp >= 0xE0000 && cp <= 0xE007F))
        return true; /* interlinear annotations, tag characters */
    return false;
}

size_t sim_escape_cp(uint32_t cp, char *out)
{
    switch (cp) {
    case '\\': return (size_t)snprintf(out, 11, "\\\\");
    case 0x1B: return (size_t)snprintf(out, 11, "\\e");
    case '\n': return (size_t)snprintf(out, 11, "\\n");
    case '\r': return (size_t)snprintf(out, 11, "\\r");
    case '\t': return (size_t)snprintf(out, 11, "\\t");
    case 0: return (size_t)snprintf(out, 11, "\\0");
    default: break;
    }
    if (cp < 0x100)
        return (size_t)snprintf(out, 11, "\\x%02x", (unsigned)cp);
    return (size_t)snprintf(out, 11, "\\u%04x", (unsigned)cp);
}

size_t sim_escape(const char *in, size_t n, char *out, size_t size)
{
    size_t total = 0, used = 0;
    bool full = size == 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = sim_utf8_decode(in + i, n - i, &cp);
        char buf[16];
        size_t m;
        if (sim_escape_needed(cp))
            m = sim_escape_cp(cp, buf);
        else if (cp == 0xFFFD && !(k == 3 && memcmp(in + i, "\xEF\xBF\xBD", 3) == 0))
            m = sim_utf8_encode(0xFFFD, buf);
        else
            memcpy(buf, in + i, k), m = k;
        i += k;
        total += m;
        if (!full && used + m < size) {
            memcpy(out + used, buf, m);
            used += m;
        } else {
            full = true;
        }
    }
    if (size)
        out[used] = '\0';
    return total;
}

char *sim_escape_dup(const char *s)
{
    size_t n = strlen(s);
    size_t need = sim_escape(s, n, NULL, 0) + 1;
    char *out = sim_xmalloc(need);
    sim_escape(s, n, out, need);
    return out;
}
