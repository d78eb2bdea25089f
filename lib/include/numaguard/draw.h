/**
 * @file numaguard/draw.h
 * @brief Pictures of a placement: the machine (packages, NUMA nodes, L3
 *        groups, cores and their PUs, GPUs, NICs, CPU-less memory nodes)
 *        with each task's slice, GPU(s), NIC(s) and memory nodes in its
 *        colour (a plan), or the runnable threads per core (an inspection).
 *        As a self-contained SVG document or as a terminal map (one row
 *        per NUMA node, one cell per core). Implemented in lib/draw/
 *        (what is drawn and how to read it: docs/draw.md).
 *
 * Drawing reads the topology, the plan and the inspection and writes to a
 * stdio stream; it keeps nothing. Thread-safe on distinct streams. Every
 * string that comes from a file, /proc or the caller (NIC names, process
 * names, the title) is escaped: XML-escaped in the SVG, made printable
 * (ng_text_escape) in the map.
 */
#ifndef NUMAGUARD_DRAW_H
#define NUMAGUARD_DRAW_H

#include <stdio.h>

#include "numaguard/plan.h"
#include "numaguard/inspect.h"

#ifdef __cplusplus
extern "C" {
#endif

/** ng_draw_request.flags */
enum {
    /** Map only: colour the cells with terminal escape sequences (the
     *  caller decides: stdout a terminal and NO_COLOR unset, say).
     *  Without it the map is plain text. */
    NG_DRAW_COLOR = 1u << 0,
    /** Outline task @c highlight_task (exec --dry-run: this rank). */
    NG_DRAW_HIGHLIGHT = 1u << 1,
    /** Draw every NIC in full. Without it a plan's picture draws only the
     *  NICs its tasks use, topo and check pictures the RDMA ones (small);
     *  one box counts the others (docs/draw.md). */
    NG_DRAW_ALL_NICS = 1u << 2
};

/** What to draw over the machine. Zero-initialise, then set what you need.
 *  Read only during the call. */
typedef struct ng_draw_request {
    /** Tasks to colour (their CPUs, GPUs, NICs and memory nodes), or NULL. */
    const ng_plan *plan;
    /** numaguard check: runnable threads per core, piled processes and
     *  oversubscribed cores; or NULL. Not together with @c plan. */
    const ng_inspection *inspection;
    /** The allocation: allowed PUs outside it are dimmed ("excluded");
     *  NULL = every allowed PU of the topology. */
    hwloc_const_cpuset_t allowed_cpus;
    /** First line of the title ("numaguard plan: xe8640.xml"); NULL =
     *  "numaguard". Any bytes: escaped when written. */
    const char *title;
    /** Second line (job shape, policy); NULL = none. Escaped when written. */
    const char *subtitle;
    unsigned flags;           /**< NG_DRAW_* */
    unsigned highlight_task;  /**< with NG_DRAW_HIGHLIGHT: the task to outline */
    /** SVG only: the picture's size in pixels over its drawing units
     *  (0.25-8); 0 = automatic: 1, or what makes a small machine's
     *  picture 720 pixels wide (at most 3). */
    double scale;
} ng_draw_request;

/**
 * Write an SVG 1.1 document of @p topo and @p req to @p out: no script, no
 * external file or font (the generic sans-serif/monospace families), one
 * rect of class "pu" per PU of the topology (offline or disallowed ones
 * dimmed in a strip of their own), a legend and a title. Elements carry
 * data-* attributes (data-pu, data-task, data-node, data-gpu, data-nic,
 * data-mode) naming what they show (docs/draw.md). Returns 0, or -1 with
 * one line in @p err (bad request, no memory, a write error on @p out).
 */
int ng_draw_svg(const ng_topology *topo, const ng_draw_request *req, FILE *out, char *err,
                size_t errlen);

/**
 * Write the terminal map of @p topo and @p req to @p out: the title, one
 * row per NUMA node (kind, memory, then one cell per core: its task number,
 * or for an inspection its runnable threads; CPU-less nodes say so), the
 * GPUs and NICs with their tasks, and a legend. Colour escape sequences
 * only with NG_DRAW_COLOR in @c req->flags. Returns 0, or -1 with one line
 * in @p err.
 */
int ng_draw_map(const ng_topology *topo, const ng_draw_request *req, FILE *out, char *err,
                size_t errlen);

/** One node of a job-wide picture (ng_draw_svg_job): what the node said,
 *  as facts (its topology, its tasks' CPUs, its runnable threads), never
 *  as a picture: every element of the job's picture is drawn here, by the
 *  code that draws `check --svg` and `plan --svg`. */
typedef struct ng_draw_panel {
    const char *name;          /**< the node's name (any bytes: escaped) */
    const char *note;          /**< one line beside it ("4 processes", "did not answer
                                    within 30 s"); NULL none. Escaped. */
    const ng_topology *topo;   /**< the node's machine, or NULL (its band alone) */
    unsigned n_tasks;          /**< its tasks: one chip and line each */
    const int *task_ranks;     /**< their global ranks (the chip's and the cores' colour
                                    and number; -1: not a rank, grey, no core) */
    const char *const *task_labels; /**< one line per task; may be NULL. Escaped. */
    /** Per task, its CPUs (OS indices), or NULL: the cores drawn in its
     *  colour. NULL: no core coloured. */
    const hwloc_const_cpuset_t *task_cpus;
    /** Runnable threads that last ran on each CPU (OS index < n_runnable);
     *  NULL: none known. */
    const unsigned *runnable;
    unsigned n_runnable;
    /** CPUs where bound processes overlap (piled); NULL none. */
    hwloc_const_cpuset_t piled;
} ng_draw_panel;

/**
 * Write one SVG 1.1 document of a whole job to @p out: the title and
 * subtitle, then per panel a band titled with the node's name (its note,
 * its tasks: a chip in the colour of the task's global rank, the same in
 * every panel and in the plan pictures), then the node's machine (its
 * title the node's name too) with each core in its task's colour and
 * each PU in the heat colour of its runnable threads, then one legend.
 * Nothing a node sent is copied into the document but escaped text.
 * Returns 0, or -1 with one line in @p err.
 */
int ng_draw_svg_job(const char *title, const char *subtitle, const ng_draw_panel *panels,
                    unsigned n, FILE *out, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* NUMAGUARD_DRAW_H */
