/*
 * What a live source carries across going back and reloading (tui/source/live_state.h): its
 * breakpoints with their counts, its speed, whether its trace file is written, and the app's
 * state, packed into a checkpoint request and taken back by the copy that resumes.
 */
#include "tui/source/live_state.h"

#include "sim/util/xalloc.h"
#include "trace/live/watch.h"
#include "tui/source/linebp.h"

#include <stdlib.h>
#include <string.h>

/* A LINE breakpoint's parsed pattern (owned), NULL for the other kinds. */
struct tui_linebp *tui_live_line_of(enum tui_break_kind kind, const char *pattern)
{
    if (kind != TUI_BREAK_LINE)
        return NULL;
    struct tui_linebp *bp = sim_xmalloc(sizeof(*bp));
    struct diag d;
    if (tui_linebp_parse(pattern, bp, &d) < 0) {
        free(bp);
        return NULL;
    }
    return bp;
}

/* What the resumed copy keeps of this process: breakpoints (with their counts), speed,
 * whether the trace file is already written, how we go back, and the app's state. */
void tui_live_carry_pack(struct source_live *L, uint32_t how, const void *ui, size_t ui_len)
{
    struct tui_ckpt_req *r = L->req;
    r->carry_len = 0;
    uint32_t speed = (uint32_t)L->speed, nbp = 0;
    uint8_t done = L->trace_done;
    tui_ckpt_put(r, &how, sizeof(how));
    tui_ckpt_put(r, &speed, sizeof(speed));
    tui_ckpt_put(r, &done, sizeof(done));
    size_t room = sizeof(r->carry) - TUI_SOURCE_UI_MAX - 64;
    size_t need = 0;
    for (; nbp < L->nbp; nbp++) {
        need += 16 + strlen(L->bps[nbp].pattern);
        if (need > room)
            break; /* the rest do not fit: they are left behind */
    }
    /* the count, and above it the number the next breakpoint gets; each one's kind, and
     * above it its number */
    uint32_t counts = nbp | L->next_bp_number << 16;
    tui_ckpt_put(r, &counts, sizeof(counts));
    for (uint32_t i = 0; i < nbp; i++) {
        uint32_t kind = L->bps[i].kind | L->bps[i].number << 8,
                 len = (uint32_t)strlen(L->bps[i].pattern);
        tui_ckpt_put(r, &kind, sizeof(kind));
        tui_ckpt_put(r, &L->bps[i].hits, sizeof(L->bps[i].hits));
        tui_ckpt_put(r, &len, sizeof(len));
        tui_ckpt_put(r, L->bps[i].pattern, len);
    }
    uint32_t n = (uint32_t)(ui_len < TUI_SOURCE_UI_MAX ? ui_len : TUI_SOURCE_UI_MAX);
    tui_ckpt_put(r, &n, sizeof(n));
    tui_ckpt_put(r, ui, n);
}

/*
 * The watch id of a METRIC breakpoint carried back into this copy (its condition as text):
 * the copy's own when it watched the same condition already (its state as of the copy
 * carries on), else the condition watched anew. old[0..nold) are the copy's breakpoints;
 * the one reused is marked (id -1). -1 when the text does not parse (it did before).
 */
static int carried_watch(struct source_live *L, struct bp *old, size_t nold, const char *text)
{
    for (size_t i = 0; i < nold; i++)
        if (old[i].kind == TUI_BREAK_METRIC && old[i].id >= 0 &&
            strcmp(old[i].pattern, text) == 0) {
            int id = old[i].id;
            old[i].id = -1;
            return id;
        }
    struct trace_watch_cond c;
    struct diag d;
    if (trace_watch_parse(text, clock_ghz(L), &c, &d) < 0)
        return -1;
    if (!L->watch)
        L->watch = trace_watch_new(L->feed);
    int id = L->next_watch_id++;
    trace_watch_add(L->watch, id, &c);
    return id;
}

uint32_t tui_live_carry_unpack(struct source_live *L)
{
    const struct tui_ckpt_req *r = L->req;
    size_t at = 0;
    uint32_t how = 0, speed = 0, nbp = 0, n = 0;
    uint8_t done = 0;
    tui_ckpt_get(r, &at, &how, sizeof(how));
    if (tui_ckpt_get(r, &at, &speed, sizeof(speed))) /* events per second (at most 1e9), 0: max */
        L->speed = speed;
    tui_ckpt_get(r, &at, &done, sizeof(done));
    if (done) { /* the file is written; this copy leaves it alone */
        L->trace_done = true;
        L->trace_rc = 0;
    }
    struct bp *old = L->bps; /* this copy's, from when it was taken */
    size_t nold = L->nbp;
    L->bps = NULL;
    L->nbp = 0;
    tui_ckpt_get(r, &at, &nbp, sizeof(nbp));
    L->next_bp_number = nbp >> 16;
    nbp &= 0xffff;
    for (uint32_t i = 0; i < nbp; i++) {
        uint32_t kind = 0, len = 0;
        uint64_t hits = 0;
        if (!tui_ckpt_get(r, &at, &kind, sizeof(kind)) ||
            !tui_ckpt_get(r, &at, &hits, sizeof(hits)) ||
            !tui_ckpt_get(r, &at, &len, sizeof(len)) || at + len > r->carry_len)
            break;
        char *pat = sim_xmalloc(len + 1);
        tui_ckpt_get(r, &at, pat, len);
        pat[len] = '\0';
        struct bp b = {(enum tui_break_kind)(kind & 0xff), pat, hits, -1, NULL, kind >> 8};
        b.line = tui_live_line_of(b.kind, pat);
        if (b.kind == TUI_BREAK_METRIC)
            b.id = carried_watch(L, old, nold, pat);
        L->bps = sim_xreallocarray(L->bps, L->nbp + 1, sizeof(*L->bps));
        L->bps[L->nbp++] = b;
    }
    for (size_t i = 0; i < nold; i++) { /* breakpoints removed since this copy was taken */
        if (old[i].kind == TUI_BREAK_METRIC && old[i].id >= 0)
            trace_watch_remove(L->watch, old[i].id);
        free(old[i].pattern);
        free(old[i].line);
    }
    free(old);
    if (tui_ckpt_get(r, &at, &n, sizeof(n)) && n <= sizeof(L->ui) && tui_ckpt_get(r, &at, L->ui, n))
        L->ui_len = n ? n : 1;
    else
        L->ui_len = 1;
    set_speed_text(L);
    return how;
}
