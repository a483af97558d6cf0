/*
 * The details of a loaded trace's events, read again from its file in event order (the
 * Chrome export writes every event's details): the file is mapped on its own and the pages
 * behind the last event read are given back as the reading proceeds, so the memory stays
 * the model's whatever the file's size; and a details object of plain ASCII strings and
 * integers (what npuscope writes) is copied as it stands instead of being parsed into a
 * tree and printed again, which gives the same bytes (trace/file/jsonout.h). Anything else
 * (escapes, non-ASCII text, fractions, repeated keys, deep nesting) is parsed and printed as
 * before.
 */
#ifndef TRACE_DETSRC_H
#define TRACE_DETSRC_H

#include "trace/file/jsonout.h"
#include "trace/model/model.h"

#include <stdint.h>

struct trace_detsrc;

/*
 * Open the plain (not compressed) trace file at path that m was loaded from. Returns NULL
 * when it cannot be mapped or is compressed: trace_detsrc_write then reads through the
 * model (trace_model_event_details).
 */
struct trace_detsrc *trace_detsrc_open(const char *path);

/* Close s (NULL is a no-op). */
void trace_detsrc_close(struct trace_detsrc *s);

/*
 * When event i of m has details, write prefix and then its details to o, exactly as
 * trace_out_value(o, trace_model_event_details(m, i)) prints them; nothing when it has
 * none. s may be NULL (read through the model).
 */
void trace_detsrc_write(struct trace_detsrc *s, const struct trace_model *m, uint64_t i,
                        const char *prefix, struct trace_out *o);

#endif
