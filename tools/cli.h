/* Shared pieces of the numaguard command-line tool. */
#ifndef NG_CLI_H
#define NG_CLI_H

#include "numaguard.h"
#include <stdio.h>

/* ---- JSON writer: compact, one document per call sequence ---- */
typedef struct json_out {
    FILE *f;
    int need_comma[32];
    int depth;
} json_out;

void json_begin_object(json_out *j, const char *key);
void json_end_object(json_out *j);
void json_begin_array(json_out *j, const char *key);
void json_end_array(json_out *j);
void json_string(json_out *j, const char *key, const char *value);
void json_uint(json_out *j, const char *key, unsigned long long value);
void json_int(json_out *j, const char *key, long long value);
void json_fixed2(json_out *j, const char *key, double value);
void json_bool(json_out *j, const char *key, int value);
/* An array of OS indices from a bitmap. */
void json_index_array(json_out *j, const char *key, hwloc_const_bitmap_t set);

/* @p s as a JSON string: control characters (C0, DEL, C1) as \uXXXX,
 * bytes that are not UTF-8 as \ufffd. */
void json_write_escaped(FILE *f, const char *s);
/* Write a JSON value given as text (checked by the caller with json_valid). */
void json_raw(json_out *j, const char *key, const char *text, size_t len);

/* ---- JSON reader (json_read.c): syntax check and lookups, no tree ---- */
typedef struct json_span {
    const char *p;     /* the value's raw text */
    size_t len;
} json_span;
/* 0 when @p text is exactly one valid JSON value (whitespace around it
 * allowed; depth at most 64); *doc is that value. */
int json_valid(const char *text, size_t len, json_span *doc);
/* In a valid object: the value of @p key (first one). 0 or -1. */
int json_member(json_span obj, const char *key, json_span *out);
/* In a valid array: element @p i. 0 or -1. */
int json_element(json_span arr, unsigned i, json_span *out);
/* A valid string value decoded (UTF-8, malloc'd), or NULL. */
char *json_string_dup(json_span v);
/* A valid integer value. 0 or -1. */
int json_number(json_span v, long long *out);
/* Write valid JSON value @p v to @p f with every string (keys included)
 * re-written by json_write_escaped: valid UTF-8, control characters
 * escaped, whatever bytes the value held; whitespace dropped. */
void json_copy_clean(FILE *f, json_span v);

/* ---- options common to every subcommand ---- */
typedef struct common_opts {
    const char *topology;   /* --topology FILE */
    const char *fsroot;     /* --fsroot DIR (tests) */
    int json;               /* --json */
    const char *svg;        /* --svg FILE ("-": stdout) */
    int map;                /* --map */
    double scale;           /* --scale F (0: automatic) */
    int all_nics;           /* --all-nics */
} common_opts;

/* Load the topology named by the options (live when none); prints the error. */
ng_topology *cli_load_topology(const common_opts *o);

/* Print "numaguard: <msg>" to stderr; returns 2 (usage) or 1 (failure). */
int cli_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "--omp-guard 8": getopt takes an option whose value is optional bare
 * and leaves "8" over. Called where the bare option was seen: 1 when
 * @p word (the argument after it, NULL if none) is a value of @p opt
 * ("--omp-guard" or "--net-affinity") and no option itself. */
int cli_is_option_value(const char *opt, const char *word);
/* The one line for that mistake: "<cmd>: did you mean <opt>=<word>? ..."
 * with @p what saying what became of the word; returns 2. */
int cli_bare_value(const char *cmd, const char *opt, const char *word, const char *what);

/* ---- --help: a usage line, then each option in one line ---- */
typedef struct cli_opt_doc {
    const char *opt;    /* "--tasks N" */
    const char *text;   /* one line, no newline */
} cli_opt_doc;

/* @p synopsis (its own lines), "options:", then one line per entry of
 * @p docs (ending at an entry with opt NULL), the texts aligned. */
void cli_usage(FILE *f, const char *synopsis, const cli_opt_doc *docs);

/* Entries several commands share. */
#define CLI_DOC_TOPOLOGY {"--topology FILE", "an hwloc XML file (lstopo --of xml) instead of this machine"}
#define CLI_DOC_FSROOT {"--fsroot DIR", "read /sys, /proc and /dev under DIR (tests)"}
#define CLI_DOC_HELP {"--help", "print this text and exit"}
#define CLI_DOC_MAP(what) {"--map", what " as a map: one row per NUMA node, one cell per core"}
#define CLI_DOC_SVG(what) {"--svg FILE", what " as an SVG picture into FILE (- for stdout; docs/draw.md)"}
#define CLI_DOC_SCALE {"--scale F", "the SVG's pixels per unit, 0.25-8 (default: 1; small machines up to 3, 720 px wide)"}
#define CLI_DOC_ALL_NICS {"--all-nics", "draw and list every NIC (default: a plan's in use, else the RDMA ones; one box counts the rest)"}
/* --scale and --all-nics, which every command that draws documents
 * together; the end of every command's table: --fsroot, --help, the
 * closing entry. */
#define CLI_DOC_PICTURE CLI_DOC_SCALE, CLI_DOC_ALL_NICS
#define CLI_DOC_END CLI_DOC_FSROOT, CLI_DOC_HELP, {NULL, NULL}
/* The getopt entries of common_opts, shared by topo, plan, exec and check:
 * --topology, --fsroot, --json, --svg, --map, --scale, --all-nics. */
#define CLI_OPTS_COMMON                                                                     \
    {"topology", required_argument, NULL, 't'}, {"fsroot", required_argument, NULL, 'r'},  \
        {"json", no_argument, NULL, 'j'}, {"svg", required_argument, NULL, 'S'},            \
        {"map", no_argument, NULL, 'M'}, {"scale", required_argument, NULL, 'Z'},          \
        {"all-nics", no_argument, NULL, 'E'}
/* getopt's @p c for one of CLI_OPTS_COMMON into @p o: 0 when stored, 2
 * (with the message) for a bad value, -1 when @p c is none of them (the
 * subcommand's own option then). */
int cli_common_option(const char *cmd, int c, const char *arg, common_opts *o);

/* ---- --svg and --map (cli_draw.c) ---- */
/* 2 (with the message) when --json, --map and --svg - compete for stdout. */
int cli_draw_check(const char *cmd, const common_opts *o);
/* 1 when --map or --svg - takes stdout (the usual output is then left out). */
int cli_draw_stdout(const common_opts *o);
/* The map on stdout and/or the SVG into its file; 0, or 1 with the message. */
int cli_draw(const char *cmd, const common_opts *o, const ng_topology *topo,
             ng_draw_request *req);
/* The topology's file name, or "this machine (HOST)", for titles. */
const char *cli_topology_name(const common_opts *o, char *buf, size_t len);

int cmd_topo(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_check(int argc, char **argv);
/* check --job ID without --local: every node of the job (cmd_check_job.c). */
int cmd_check_job(const char *job_id, const common_opts *o, int threads, unsigned timeout_s,
                  unsigned parallel, const char *replay);
int cmd_doctor(int argc, char **argv);

#endif
