/* numaguard check's report of one node's processes (check_report.c). */
#ifndef NG_CHECK_REPORT_H
#define NG_CHECK_REPORT_H

#include "cli.h"

#include <stdio.h>

/* A string from /proc, made safe for a terminal (into @p buf). */
const char *check_esc(const char *s, char *buf, size_t len);
/* One process as a JSON object of the "processes" array. */
void check_proc_json(json_out *j, const ng_topology *topo, const ng_proc_view *p);
/* One process as text; @p all_threads: a line per thread (--threads). */
void check_proc_text(FILE *out, const ng_topology *topo, const ng_proc_view *p, int all_threads);
/* The inspection's summary as members of the current JSON object. */
void check_summary_json(json_out *j, const ng_inspection *ins);
/* The summary after @p shown processes, as text. */
void check_summary_text(FILE *out, const ng_inspection *ins, unsigned shown);

#endif
