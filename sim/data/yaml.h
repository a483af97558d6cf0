/*
 * Safe YAML loading: one YAML document (libyaml's event API) into a struct sim_value tree.
 * Chip configs, workloads and themes all come through here. Scalars are typed by the
 * YAML 1.2 core schema; every node keeps the line and column where it starts, and the
 * loaded document also remembers where each mapping key was written, so later validation
 * can point at the exact key.
 *
 * The input is untrusted: nesting depth and the number of nodes (aliases counted with the
 * size of what they copy) are capped, duplicate and non-string keys and multiple
 * documents are errors, and every error is one diag with file, line and column.
 */
#ifndef SIM_YAML_H
#define SIM_YAML_H

#include "sim/util/diag.h"
#include "sim/data/value.h"

#include <stdbool.h>
#include <stddef.h>

enum {
    SIM_YAML_MAX_DEPTH = 64,      /* nested collections in one document */
    SIM_YAML_MAX_NODES = 1 << 20, /* nodes in one document, alias copies included */
    SIM_YAML_MAX_FILE = 64 << 20, /* bytes read by sim_yaml_load_file */
};

/* Safety limits; a zero field means the default above. */
struct sim_yaml_limits {
    unsigned max_depth; /* more nested maps/lists than this is an error */
    size_t max_nodes;   /* more nodes than this (after alias expansion) is an error */
};

/* A loaded document: the value tree and the positions of its mapping keys. Opaque. */
struct sim_yaml_doc;

/*
 * Parse one YAML document from buf (len bytes, need not be NUL-terminated). file names the
 * input in diagnostics (may be NULL). lim may be NULL for the defaults.
 *
 * Typing (YAML 1.2 core schema, plain scalars only): null, Null, NULL, ~ and the empty
 * scalar are null; true/True/TRUE/false/False/FALSE are bool; [-+]?[0-9]+, 0o[0-7]+ and
 * 0x[0-9a-fA-F]+ are int (an int outside int64 is an error); decimal floats with optional
 * exponent, [-+]?.inf and .nan (any of the three spellings) are float; anything else is a
 * string. Quoted and block scalars are always strings. The tags !!str, !!int, !!float,
 * !!bool, !!null, !!map and !!seq are honoured (a value that does not match its tag is an
 * error); other tags are errors. An empty stream gives a null root.
 *
 * Aliases are expanded into deep copies; each copy counts towards max_nodes with the
 * full size of the anchored node, checked before copying, so an alias bomb ("billion
 * laughs") fails fast. An alias may not make the tree deeper than max_depth. Merge keys
 * ("<<") are not special. Keys must be strings (a plain key such as 1 or true is not)
 * and unique within their map. A second document in the stream is an error.
 *
 * Returns 0 and sets *out (owned by the caller, free with sim_yaml_doc_free), or a
 * negative sim_err (SIM_EPARSE syntax and typing, SIM_ELIMIT limits) with d filled and
 * *out set to NULL. Every libyaml event and the parser are released on every path.
 */
int sim_yaml_load(const char *buf, size_t len, const char *file, const struct sim_yaml_limits *lim,
                  struct sim_yaml_doc **out, struct diag *d);

/* Read the file at path (at most SIM_YAML_MAX_FILE bytes) and sim_yaml_load it, with path
 * as the file name in diagnostics. I/O errors are SIM_EIO ("PATH: cannot open: ..."). */
int sim_yaml_load_file(const char *path, const struct sim_yaml_limits *lim,
                       struct sim_yaml_doc **out, struct diag *d);

/*
 * What a module makes of a loaded document: read root (the document's tree; doc answers
 * where its keys were written), fill the caller's result (out, of the type the module
 * knows) and return 0, or a negative sim_err with d filled. file names the input.
 */
typedef int (*sim_yaml_build_fn)(const struct sim_value *root, const struct sim_yaml_doc *doc,
                                 const char *file, void *out, struct diag *d);

/*
 * Load one document from buf (len bytes; as sim_yaml_load, with the default limits), hand
 * it to build with out, and free it. Returns the loading error or what build returned.
 */
int sim_yaml_build(const char *buf, size_t len, const char *file, sim_yaml_build_fn build,
                   void *out, struct diag *d);

/* The same for the file at path (read as by sim_yaml_load_file). */
int sim_yaml_build_file(const char *path, sim_yaml_build_fn build, void *out, struct diag *d);

/* Free a document and its tree. NULL is a no-op. */
void sim_yaml_doc_free(struct sim_yaml_doc *doc);

/* The root of the document (borrowed; valid until the doc is freed or the root taken). */
const struct sim_value *sim_yaml_doc_root(const struct sim_yaml_doc *doc);

/* Take ownership of the root; the doc then has a NULL root but still answers key
 * positions for the maps of the taken tree while that tree lives. */
struct sim_value *sim_yaml_doc_take_root(struct sim_yaml_doc *doc);

/* The file name the doc was loaded with ("" when none). Borrowed. */
const char *sim_yaml_doc_file(const struct sim_yaml_doc *doc);

/*
 * Where key number i of map (a map of this document's tree) was written: fills *line and
 * *col (1-based) and returns true; returns false, leaving them alone, for a map that was
 * not parsed by this doc (an alias copy, a map built later, NULL doc) or i out of range.
 */
bool sim_yaml_doc_key_pos(const struct sim_yaml_doc *doc, const struct sim_value *map, size_t i,
                          int *line, int *col);

/* ---- helpers for validating a loaded tree ---- */

/* A short description of a value for messages: "str 'fast'", "int -3", "float 2.0",
 * "bool true", "list", "map", "null" (long strings are cut). Returns buf. */
const char *sim_yaml_describe(const struct sim_value *v, char *buf, size_t size);

/* The candidate (NULL-terminated list) an unknown key was probably meant to be: one that
 * is the key plus a "_suffix" (a unit left out: "latency" for "latency_ns"), else the
 * closest by edit distance when at most a third of the key's characters differ; else
 * NULL. */
const char *sim_yaml_closest(const char *key, const char *const *candidates);

/* Convenience: parse buf and return only the tree (owned by the caller) in *out. */
int sim_yaml_parse(const char *buf, size_t len, const char *file, struct sim_value **out,
                   struct diag *d);

#endif
