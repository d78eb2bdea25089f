/* plan --explain and exec --dry-run --explain: the planner's explanation
 * (ng_plan_explain) as text or JSON (plan_why.c; docs/json.md). */
#ifndef NG_WHY_H
#define NG_WHY_H

#include "cli.h"

/* One task's terms on one line (no newline). */
void why_terms_text(const ng_task_terms *x, int gpu, char *buf, size_t len);
/* The terms as the members of the current JSON object. */
void why_terms_json(json_out *j, const ng_task_terms *x, const char *note);
/* After plan's table: per task its terms and sentence, then every cut. */
void why_plan_text(const ng_plan *plan, const ng_plan_explanation *x);
/* plan --json --explain: "explain": {"tasks": [...], "cuts": [...]}. */
void why_plan_json(json_out *j, const ng_plan *plan, const ng_plan_explanation *x);

#endif
