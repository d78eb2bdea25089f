/* The drawing module (lib/draw/): pictures of a plan or an inspection over
 * the machine, as SVG or a terminal map. Private to the library (ngi_*).
 *
 * Files, each calling only the ones above it:
 *   draw_palette.c  the colours: tasks, heat, states; text contrast; terminal
 *   draw_text.c     escaping (XML, terminal), sizes, text width estimates
 *   draw_model.c    what the picture says: per PU, per core, per NUMA node,
 *                   GPU and NIC (from the plan or the inspection)
 *   draw_place.c    sizes and places of the boxes
 *   draw_layout.c   the hwloc tree as nested boxes (then draw_place.c)
 *   draw_legend.c   title and legend rows (SVG and map share them)
 *   draw_svg.c      boxes, title and legend as SVG elements
 *   draw_map.c      the terminal map
 *   draw.c          ng_draw_svg, ng_draw_map (the orchestrator)
 * (File names start with draw_: object names are unique across lib/.)
 */
#ifndef NGI_DRAW_H
#define NGI_DRAW_H

#include "base.h"

#include <stdio.h>

/* ---- draw_palette.c ---- */

typedef struct ngi_rgb {
    unsigned char r, g, b;
} ngi_rgb;

/** Fixed colours of the picture (not tasks, not heat). */
typedef enum ngi_colour {
    NGI_C_FREE = 0,   /* a core of `topo` (no allocation drawn) */
    NGI_C_IDLE,       /* allocated, no task on it */
    NGI_C_DIM,        /* excluded from the allocation, offline, disallowed */
    NGI_C_SHARED,     /* background of a core shared by several tasks */
    NGI_C_DRAM,       /* NUMA bars and memory boxes, by kind */
    NGI_C_HBM,
    NGI_C_GPUMEM,
    NGI_C_NVM,
    NGI_C_CXL,
    NGI_C_UNKNOWN,
    NGI_C_DEVICE,     /* a GPU or NIC no task uses */
    NGI_C_COUNT
} ngi_colour;

/** Number of distinct task colours (their greys 25 apart or more); then
 *  they repeat with a pattern (NGI_TASK_PATTERNS, the first none), and the
 *  cells carry the task number. */
#define NGI_TASK_COLOURS 8
#define NGI_TASK_PATTERNS 4
/** Heat levels of `check` (runnable threads per core: 0, 1, 2, 3, 4, 5+). */
#define NGI_HEAT_LEVELS 6

ngi_rgb ngi_draw_task_rgb(unsigned task);
/** The task's pattern over its colour: 0 none (tasks 0-7), 1 horizontal
 *  stripes (8-15), 2 dots (16-23), 3 vertical stripes (24-31), then again
 *  (draw_svg.c's patterns "task1".."task3"). */
unsigned ngi_draw_task_pattern(unsigned task);
/** The oversubscription mark (border and badge of a core in `check`):
 *  blue, a hue none of the heat colours has. */
ngi_rgb ngi_draw_over_rgb(void);
ngi_rgb ngi_draw_heat_rgb(unsigned runnable);
ngi_rgb ngi_draw_rgb(ngi_colour c);
/** The memory kind's colour (NUMA bars, CPU-less node boxes). */
ngi_rgb ngi_draw_kind_rgb(ng_mem_kind kind);
/** "#rrggbb" */
void ngi_draw_hex(ngi_rgb c, char out[8]);
/** 1 if white text reads better on @p c than black. */
int ngi_draw_dark(ngi_rgb c);
/** Nearest colour of the xterm 256-colour palette (16..255). */
unsigned ngi_draw_ansi256(ngi_rgb c);

/* ---- draw_text.c ---- */

/** Write @p s to @p f as XML character data / attribute value: first made
 *  printable ASCII (ng_text_escape: other bytes become \xNN), then
 *  & < > " ' as entities. Bounded to 1024 bytes of input. */
void ngi_draw_xml(FILE *f, const char *s);
/** Write @p s to @p f made printable (ng_text_escape). */
void ngi_draw_plain(FILE *f, const char *s);
/** "503 GiB", "12 GiB", "96 MiB", "?" for 0. */
void ngi_draw_bytes(unsigned long long bytes, char *buf, size_t len);
/** Estimated width in pixels of @p s in the sans-serif font at @p px. */
int ngi_draw_text_w(const char *s, int px);
/** A cpulist that may be long: "(N CPUs)" when it does not fit @p len. */
void ngi_draw_list(hwloc_const_bitmap_t set, char *buf, size_t len);

/* ---- draw_model.c ---- */

/* NGI_MODE_JOB: one node of the job-wide picture (draw_job.c): cores in
 * their task's colour as in a plan (a task is its global rank), each PU
 * in the heat colour of its runnable threads, oversubscribed and piled
 * cores marked as in check. */
typedef enum ngi_draw_mode {
    NGI_MODE_TOPO = 0,
    NGI_MODE_PLAN,
    NGI_MODE_CHECK,
    NGI_MODE_JOB
} ngi_draw_mode;

/** State of a PU (and, summed up, of a core). In NGI_MODE_JOB a PU with
 *  a task is TASK, one without IDLE, as in a plan. */
typedef enum ngi_pu_state {
    NGI_PU_FREE = 0,  /* topo: no allocation to show */
    NGI_PU_IDLE,      /* allocated, no task */
    NGI_PU_TASK,      /* one or more tasks */
    NGI_PU_EXCLUDED,  /* in the topology, outside the allocation */
    NGI_PU_ABSENT     /* offline or disallowed: not in hwloc's tree */
} ngi_pu_state;

/** How a NIC is drawn (ngi_draw_model.nic_shown). */
typedef enum ngi_nic_show {
    NGI_NIC_HIDDEN = 0,   /* counted in the one summary box */
    NGI_NIC_SMALL,        /* one line: its name and kind (topo, check) */
    NGI_NIC_FULL          /* name, kind and interface, its tasks */
} ngi_nic_show;

typedef struct ngi_draw_model {
    const ng_topology *topo;
    const ng_draw_request *req;
    hwloc_topology_t hw;
    ngi_draw_mode mode;
    unsigned ntasks;
    unsigned npu;                 /* PU slots: highest PU OS index + 1 */
    int *pu_task;                 /* lowest task on the PU, -1 none */
    unsigned *pu_ntasks;          /* tasks on the PU */
    unsigned *pu_runnable;        /* check: runnable threads that last ran there */
    hwloc_bitmap_t allowed;       /* the allocation */
    hwloc_bitmap_t present;       /* PUs in hwloc's tree */
    hwloc_bitmap_t absent;        /* complete cpuset minus present */
    hwloc_bitmap_t piled;         /* check: PUs of overlapping bound processes */
    hwloc_bitmap_t *node_tasks;   /* per NUMA index: tasks whose memory names it */
    hwloc_bitmap_t *gpu_tasks;    /* per GPU index */
    hwloc_bitmap_t *nic_tasks;    /* per NIC index */
    int nics_asked;               /* plan: some task was given NICs (--net-affinity) */
    unsigned char *nic_shown;     /* per NIC index: ngi_nic_show */
    unsigned nic_hidden;          /* NICs not drawn ... */
    unsigned nic_hidden_eth;      /* ... of them Ethernet */
} ngi_draw_model;

int ngi_draw_model_build(ngi_draw_model *m, const ng_topology *topo,
                         const ng_draw_request *req, char *err, size_t errlen);
void ngi_draw_model_free(ngi_draw_model *m);
ngi_pu_state ngi_draw_pu_state(const ngi_draw_model *m, unsigned pu);
/** The task's memory mode (NG_MEM_MODE_NONE without a plan). */
ng_mem_mode ngi_draw_task_mode(const ngi_draw_model *m, unsigned task);
/** One letter per memory mode: B bind, P prefer, I interleave, W weighted. */
char ngi_draw_mode_letter(ng_mem_mode mode);
/** The word the legend uses for a mode ("bind", "prefer", ...). */
const char *ngi_draw_mode_word(ng_mem_mode mode);

/** What one core shows. */
typedef struct ngi_draw_cell {
    ngi_pu_state state;   /* TASK if a task is on it, else IDLE if allocated, ... */
    int task;             /* lowest task on its PUs, -1 none */
    int shared;           /* several tasks on its PUs */
    unsigned pus;         /* its PUs */
    unsigned first_pu;    /* OS index of its first PU */
    unsigned runnable;    /* check */
    int over;             /* check: more runnable threads than PUs */
    int piled;            /* check: in an overlap of bound processes */
    int highlight;        /* the highlighted task is on it */
    char tasks[40];       /* plan, shared: its tasks ("0,1", "4-7"; "9 tasks") */
} ngi_draw_cell;

void ngi_draw_cell_of(const ngi_draw_model *m, hwloc_const_cpuset_t pus, ngi_draw_cell *c);
/** The core of PU object @p pu (itself when hwloc has no Core above it). */
hwloc_obj_t ngi_draw_core_of(hwloc_obj_t pu);
/** Next core (or core-less PU) in logical order after @p prev (NULL: first). */
hwloc_obj_t ngi_draw_next_core(hwloc_topology_t hw, hwloc_obj_t prev);

/* ---- draw_place.c, draw_layout.c ---- */

typedef enum ngi_box_kind {
    NGI_BOX_MACHINE = 0,
    NGI_BOX_PACKAGE,
    NGI_BOX_GROUP,      /* a Group/Die carrying NUMA nodes */
    NGI_BOX_L3,
    NGI_BOX_CORE,
    NGI_BOX_BAR,        /* a CPU NUMA node: the band on top of its box */
    NGI_BOX_MEM,        /* a CPU-less NUMA node */
    NGI_BOX_GPU,
    NGI_BOX_NIC,
    NGI_BOX_GPUSET,     /* a GPU with its memory nodes */
    NGI_BOX_ABSENT,     /* offline or disallowed CPUs */
    NGI_BOX_NICSUM      /* the NICs not drawn: how many, which kinds */
} ngi_box_kind;

typedef struct ngi_box {
    ngi_box_kind kind;
    hwloc_obj_t obj;        /* containers and cores */
    unsigned index;         /* BAR/MEM: NUMA index; GPU/GPUSET: GPU; NIC: NIC */
    int parent;
    int bars, grid, strip;  /* heads of the child lists, -1 none */
    int next;               /* next in its parent's list */
    int x, y, w, h;         /* absolute once ngi_draw_layout returns */
    char label[80];         /* the box's own label (raw; escape when writing) */
} ngi_box;

typedef struct ngi_layout {
    ngi_box *box;           /* box[0] is the machine */
    unsigned n, cap;
} ngi_layout;

/* Sizes (pixels) of the picture's pieces. */
enum {
    NGI_PU_W = 6, NGI_PU_H = 8, NGI_PU_GAP = 2,
    NGI_CORE_W = 24, NGI_CORE_H = 28, NGI_CORE_PAD = 3,
    NGI_PAD = 6, NGI_GAP = 4, NGI_LABEL_H = 16,
    NGI_BAR_H = 18, NGI_CHIP_W = 22, NGI_CHIP_H = 12, NGI_CHIP_GAP = 3,
    NGI_MEM_CHIPS = 4, NGI_BAR_CHIPS = 16, NGI_MAX_CHIPS = 32,
    NGI_FONT = 11, NGI_SMALL = 10, NGI_LINE = 12,
    NGI_MARGIN = 12, NGI_TITLE_H = 66, NGI_CELL = 16
};

/** draw_place.c: sizes of every box (children before parents: every child
 *  has a larger index than its parent), then absolute places, the machine
 *  at (NGI_MARGIN, NGI_TITLE_H). */
void ngi_draw_place(ngi_layout *l, const ngi_draw_model *m);
/** draw_layout.c: the boxes of @p m's topology, placed. */
int ngi_draw_layout(ngi_layout *l, const ngi_draw_model *m, char *err, size_t errlen);
void ngi_draw_layout_free(ngi_layout *l);
/** The text lines of a band (one), a CPU-less node box (two), a GPU, a
 *  NIC (three; a small NIC one) or the box of NICs not drawn (three); raw
 *  bytes (names from files): escape them when writing. */
void ngi_draw_box_lines(const ngi_draw_model *m, const ngi_box *b, char lines[3][96]);
/** Rows of memory chips a node box needs for @p n tasks, @p per_row a row. */
unsigned ngi_draw_chip_rows(unsigned n, unsigned per_row);

/* ---- draw_legend.c ---- */

typedef enum ngi_swatch {
    NGI_SW_NONE = 0,
    NGI_SW_TASK,        /* value: task */
    NGI_SW_STATE,       /* value: ngi_pu_state */
    NGI_SW_SHARED,
    NGI_SW_MODE,        /* value: ng_mem_mode */
    NGI_SW_HEAT,        /* value: runnable */
    NGI_SW_OVER,
    NGI_SW_PILED,
    NGI_SW_HIGHLIGHT
} ngi_swatch;

/** One line of the legend: a swatch and its text. */
typedef struct ngi_legend_row {
    ngi_swatch swatch;
    unsigned value;
    char text[480];         /* raw: escape when writing */
} ngi_legend_row;

typedef struct ngi_legend {
    char summary[240];      /* the computed third title line */
    unsigned n, cap;
    ngi_legend_row *row;
    unsigned nkeys;         /* rows [0, nkeys) are keys (one line of swatches) */
} ngi_legend;

int ngi_draw_legend(ngi_legend *lg, const ngi_draw_model *m, char *err, size_t errlen);
void ngi_draw_legend_free(ngi_legend *lg);

/* ---- draw_svg.c, draw_map.c ---- */

int ngi_draw_svg_write(FILE *f, const ngi_draw_model *m, const ngi_layout *l,
                       const ngi_legend *lg);
/** Pieces of the document for draw_job.c: the <defs> (patterns), every box
 *  of @p l, and the legend from (x0, y0) wrapping at @p width (@p f NULL:
 *  measures only; returns its height, *w its width). */
void ngi_draw_svg_defs(FILE *f);
void ngi_draw_svg_boxes(FILE *f, const ngi_draw_model *m, const ngi_layout *l);
int ngi_draw_svg_legend(FILE *f, const ngi_legend *lg, int x0, int y0, int width, int *w);
int ngi_draw_map_write(FILE *f, const ngi_draw_model *m, const ngi_legend *lg);

#endif
