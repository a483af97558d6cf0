/* The names of the semantic styles, as written in theme files. */
#include "tui/term/style.h"

#include <string.h>

static const char *const style_names[TUI_STYLE_COUNT] = {
    [TUI_STYLE_NORMAL] = "normal",
    [TUI_STYLE_DIM] = "dim",
    [TUI_STYLE_HEADER] = "header",
    [TUI_STYLE_HEADER_MODE] = "header_mode",
    [TUI_STYLE_FOOTER] = "footer",
    [TUI_STYLE_FOOTER_KEY] = "footer_key",
    [TUI_STYLE_STATUS] = "status",
    [TUI_STYLE_ERROR] = "error",
    [TUI_STYLE_PROMPT] = "prompt",
    [TUI_STYLE_BORDER] = "border",
    [TUI_STYLE_TITLE] = "title",
    [TUI_STYLE_TITLE_FOCUS] = "title_focus",
    [TUI_STYLE_RULER] = "ruler",
    [TUI_STYLE_CURSOR] = "cursor",
    [TUI_STYLE_MARKER] = "marker",
    [TUI_STYLE_LABEL] = "label",
    [TUI_STYLE_LABEL_SEL] = "label_selected",
    [TUI_STYLE_GROUP] = "group",
    [TUI_STYLE_OP_MEMORY] = "op_memory",
    [TUI_STYLE_OP_GEMM] = "op_gemm",
    [TUI_STYLE_OP_MATH] = "op_math",
    [TUI_STYLE_OP_UNKNOWN] = "op_unknown",
    [TUI_STYLE_OP_INFLIGHT] = "op_inflight",
    [TUI_STYLE_OP_SELECTED] = "op_selected",
    [TUI_STYLE_OP_TEXT] = "op_text",
    [TUI_STYLE_TOKEN_PREFILL] = "token_prefill",
    [TUI_STYLE_TOKEN_DECODE] = "token_decode",
    [TUI_STYLE_TOKEN_ALT] = "token_alt",
    [TUI_STYLE_BANDWIDTH] = "bandwidth",
    [TUI_STYLE_BAR] = "bar",
    [TUI_STYLE_BAR_EMPTY] = "bar_empty",
    [TUI_STYLE_VALUE] = "value",
    [TUI_STYLE_KEY] = "key",
    [TUI_STYLE_TAB] = "tab",
    [TUI_STYLE_TAB_ACTIVE] = "tab_active",
    [TUI_STYLE_MEM_LIVE] = "mem_live",
    [TUI_STYLE_SELECTION] = "selection",
    [TUI_STYLE_MATCH] = "match",
    [TUI_STYLE_CRITICAL] = "critical",
    [TUI_STYLE_HEAT_1] = "heat_1",
    [TUI_STYLE_HEAT_2] = "heat_2",
    [TUI_STYLE_HEAT_3] = "heat_3",
    [TUI_STYLE_HEAT_4] = "heat_4",
};

const char *tui_style_name(enum tui_style s)
{
    if ((unsigned)s >= TUI_STYLE_COUNT)
        return NULL;
    return style_names[s];
}

int tui_style_parse(const char *name, enum tui_style *out)
{
    for (int i = 0; i < TUI_STYLE_COUNT; i++) {
        if (strcmp(style_names[i], name) == 0) {
            *out = (enum tui_style)i;
            return 0;
        }
    }
    return -1;
}
