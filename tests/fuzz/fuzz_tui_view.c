/*
 * Fuzz harness for the viewer: any input the trace loader accepts is shown by the TUI
 * (headless, at a few sizes, through zoom, pan, rows, search, folding and filters) without
 * a crash, and no cell of the screen ever holds a control character, whatever the
 * strings in the file.
 */
#include "sim/util/diag.h"
#include "trace/file/loader.h"
#include "tui/app/app.h"

#include <locale.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool init;
    if (!init) {
        setlocale(LC_ALL, "C.UTF-8");
        init = true;
    }
    struct trace_model *m = NULL;
    struct diag d;
    if (trace_load_buffer((const char *)data, size, "fuzz.json", NULL, &m, &d) < 0)
        return 0;
    struct tui_source *src = tui_source_model_take(m, "fuzz.json");
    struct tui_app *a = tui_app_new(src, 80, 24, size % 2 == 0, NULL, NULL, NULL, NULL);
    static const char keys[] = "+++hl>jj\r]F\tmleo/x\rn0";
    static const int sizes[][2] = {{80, 24}, {41, 11}, {130, 40}};
    for (int s = 0; s < 3; s++) {
        tui_app_resize(a, sizes[s][0], sizes[s][1]);
        for (const char *k = keys; *k; k++) {
            tui_app_key(a, (unsigned char)*k);
            for (int i = 0; i < 100 && tui_app_busy(a); i++)
                tui_app_work(a, 50000000);
            const struct tui_canvas *c = tui_app_render(a);
            for (int i = 0; i < c->w * c->h; i++) {
                uint32_t cp = c->cells[i].cp;
                if (c->cells[i].width && (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)))
                    abort();
            }
        }
    }
    tui_app_free(a);
    tui_source_free(src);
    return 0;
}
