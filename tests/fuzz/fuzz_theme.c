/*
 * Fuzz harness for theme files (a user's own YAML): any input either parses or is
 * rejected with a diagnostic; it never crashes, and every resolved style stays within the
 * palette of the terminal.
 */
#include "tui/term/theme.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tui_theme th;
    struct diag d;
    char line[1200];
    tui_theme_init_plain(&th);
    if (tui_theme_parse(&th, (const char *)data, size, "fuzz.yaml", &d) < 0) {
        diag_format(&d, line, sizeof(line));
        return 0;
    }
    static const int sizes[] = {0, 8, 16, 256};
    for (int s = 0; s < TUI_STYLE_COUNT; s++) {
        for (int k = 0; k < 4; k++) {
            struct tui_theme_resolved r = tui_theme_resolve(&th, (enum tui_style)s, sizes[k]);
            if (r.fg < -1 || r.fg >= (sizes[k] ? sizes[k] : 1) || r.bg < -1 ||
                r.bg >= (sizes[k] ? sizes[k] : 1))
                abort();
        }
    }
    return 0;
}
