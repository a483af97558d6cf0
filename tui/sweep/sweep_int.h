/*
 * What the files of the sweep module share (private to tui/; the API is tui/sweep/sweep.h): the
 * sweep's state and a growing string with JSON output. sweep.c parses, expands and
 * validates a sweep file; sweep_dir.c writes the sweep directory and reads the results
 * back.
 */
#ifndef TUI_SWEEP_INT_H
#define TUI_SWEEP_INT_H

#include "sim/data/yaml.h"
#include "sim/program/workload.h"
#include "tui/sweep/sweep.h"

#include <stdbool.h>
#include <stddef.h>

/* A growing string. */
struct sbuf {
    char *p; /* owned, NUL-terminated once anything was added */
    size_t len, cap;
};

/* Append n bytes of s, a string, a formatted string. */
void tui_sweep_sb_putn(struct sbuf *b, const char *s, size_t n);
void tui_sweep_sb_puts(struct sbuf *b, const char *s);
void tui_sweep_sb_printf(struct sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The text built so far (an empty string when nothing was added); the caller frees. */
char *tui_sweep_sb_take(struct sbuf *b);
/* A JSON string literal of the n bytes of s; v as compact JSON (tensors as null). */
void tui_sweep_sb_json_str(struct sbuf *b, const char *s, size_t n);
void tui_sweep_sb_json(struct sbuf *b, const struct sim_value *v);

/* A key set to a value, by the sweep's fixed settings or by a point. */
struct setting {
    char *key; /* owned: as written (chip_args nested maps joined with dots) */
    enum tui_sweep_key_kind kind;
    const struct sim_value *val; /* borrowed from the sweep's tree */
    int kline, kcol;             /* where the key is written */
};

struct settings {
    struct setting *v; /* owned */
    size_t len, cap;
};

/* A base chip config, loaded once however many points use it. */
struct base_chip {
    char *name;             /* owned: as written in the sweep */
    char *chip;             /* owned: what a point records: the embedded name or a path */
    char *file;             /* owned: the name diagnostics of the config use */
    struct sim_value *tree; /* owned */
};

/* A chip config validated once, by the text of its base and settings. */
struct cfg_entry {
    char *key;              /* owned, NULL for a free slot */
    struct sim_config *cfg; /* owned */
};

/* A workload file, validated once. */
struct checked_workload {
    char *path; /* owned: absolute */
    struct sim_workload *w;
};

struct tui_sweep {
    char *file;    /* owned: as given */
    char *basedir; /* owned: directory relative paths in the file start from */
    char *text;    /* owned: the file's text (copied into the sweep directory) */
    size_t text_len;
    struct sim_yaml_doc *doc; /* owned: settings borrow its values */
    struct settings fixed;    /* chip, kernel, workload, chip_args, kernel_args */
    char **plugins; /* owned, each owned: the kernel plug-ins the file names, as paths from
                       here (loaded while the file is checked; each point's run loads them) */
    size_t nplugins;
    struct tui_sweep_axis *axes;
    size_t naxes;
    struct tui_sweep_point *points;
    struct settings *psets; /* per point: what the point sets, in axis order */
    size_t npoints;
    int id_width;
    struct base_chip **bases; /* owned, each owned: pointers to them stay valid */
    size_t nbases;
    struct checked_workload *wls;
    size_t nwls;
    /* validated chip configs by what they were built from: points that share their chip
     * settings (a chip axis crossed with kernel axes) are validated once */
    struct cfg_entry *cfgs; /* owned: an open-addressing hash table */
    size_t ncfgs, cfgs_cap;
};

#endif
