/* The doctor's report: checks in a fixed order, each with one finding
 * (the first problem of its worst status), the consequence for placement,
 * the fix, and its evidence. Every text is stored printable (bytes outside
 * 0x20..0x7e as \xNN) and bounded: file contents never reach a terminal
 * or a Slurm node reason raw. */
#include "numaguard.h"
#include "private/doctor.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_MAX 768   /* one finding, consequence, fix or fact value */

static const char empty[] = "";

/* Printable copy of a formatted line (malloc'd; NULL on no memory). */
static char *vtext(const char *fmt, va_list ap)
{
    char raw[TEXT_MAX], esc[TEXT_MAX];
    vsnprintf(raw, sizeof raw, fmt, ap);
    ngi_escape_bytes(raw, strlen(raw), esc, sizeof esc, 0);
    return strdup(esc);
}

static char *text(const char *s)
{
    char esc[TEXT_MAX];
    ngi_escape_bytes(s, strnlen(s, TEXT_MAX - 1), esc, sizeof esc, 0);
    return strdup(esc);
}

/* Replace an owned text field (the static "" is never freed). */
static void set_field(const char **field, char *value)
{
    if (*field && *field != empty)
        free((char *)*field);
    *field = value ? value : empty;
}

const char *ng_check_status_name(ng_check_status status)
{
    switch (status) {
    case NG_CHECK_OK: return "OK";
    case NG_CHECK_WARN: return "WARN";
    case NG_CHECK_FAIL: return "FAIL";
    }
    return "?";
}

ng_doctor_check *ngi_doctor_begin(ng_doctor_report *r, const char *group, const char *id)
{
    if (r->n >= NGI_DOCTOR_MAX_CHECKS)
        return NULL;
    ng_doctor_check *c = &r->checks[r->n];
    memset(c, 0, sizeof *c);
    c->id = id;
    c->group = group;
    c->finding = c->consequence = c->fix = empty;
    r->problems[r->n] = 0;
    r->n++;
    return c;
}

static unsigned *problems_of(ng_doctor_report *r, const ng_doctor_check *c)
{
    return &r->problems[c - r->checks];
}

void ngi_doctor_problem(ng_doctor_report *r, ng_doctor_check *c, ng_check_status st,
                        const char *consequence, const char *fix, const char *fmt, ...)
{
    if (!c)
        return;
    unsigned *n = problems_of(r, c);
    (*n)++;
    if (*n > 1 && st <= c->status)
        return;
    va_list ap;
    va_start(ap, fmt);
    set_field(&c->finding, vtext(fmt, ap));
    va_end(ap);
    set_field(&c->consequence, text(consequence ? consequence : ""));
    set_field(&c->fix, text(fix ? fix : ""));
    c->status = st;
}

void ngi_doctor_end(ng_doctor_report *r, ng_doctor_check *c, const char *fmt, ...)
{
    if (!c)
        return;
    unsigned n = *problems_of(r, c);
    if (n == 0) {
        va_list ap;
        va_start(ap, fmt);
        set_field(&c->finding, vtext(fmt, ap));
        va_end(ap);
        c->status = NG_CHECK_OK;
        return;
    }
    if (n > 1) {
        char more[TEXT_MAX];
        snprintf(more, sizeof more, "%s (and %u more)", c->finding, n - 1);
        set_field(&c->finding, strdup(more));
    }
}

void ngi_doctor_fact(ng_doctor_check *c, const char *key, const char *fmt, ...)
{
    if (!c || c->n_facts >= NGI_DOCTOR_MAX_FACTS)
        return;
    if (!c->facts) {
        c->facts = calloc(NGI_DOCTOR_MAX_FACTS, sizeof *c->facts);
        if (!c->facts)
            return;
    }
    ng_doctor_fact *f = (ng_doctor_fact *)&c->facts[c->n_facts];
    va_list ap;
    va_start(ap, fmt);
    f->value = vtext(fmt, ap);
    va_end(ap);
    f->key = text(key);
    if (!f->key || !f->value) {
        free((char *)f->key);
        free((char *)f->value);
        return;
    }
    c->n_facts++;
}

void ngi_doctor_input(ng_doctor_report *r, const char *key, const char *value)
{
    if (r->n_inputs >= NGI_DOCTOR_MAX_INPUTS)
        return;
    ng_doctor_fact *f = &r->inputs[r->n_inputs];
    f->key = key;                 /* static */
    f->value = text(value ? value : "");
    if (f->value)
        r->n_inputs++;
}

void ngi_doctor_report_free(ng_doctor_report *r)
{
    for (unsigned i = 0; i < r->n; i++) {
        ng_doctor_check *c = &r->checks[i];
        set_field(&c->finding, NULL);
        set_field(&c->consequence, NULL);
        set_field(&c->fix, NULL);
        for (unsigned k = 0; k < c->n_facts; k++) {
            free((char *)c->facts[k].key);
            free((char *)c->facts[k].value);
        }
        free((void *)c->facts);
    }
    for (unsigned i = 0; i < r->n_inputs; i++)
        free((char *)r->inputs[i].value);
    free(r);
}

/* ---- public accessors ---- */

unsigned ng_doctor_count(const ng_doctor_report *report)
{
    return report ? report->n : 0;
}

const ng_doctor_check *ng_doctor_check_at(const ng_doctor_report *report, unsigned i)
{
    return report && i < report->n ? &report->checks[i] : NULL;
}

ng_check_status ng_doctor_worst(const ng_doctor_report *report)
{
    ng_check_status w = NG_CHECK_OK;
    for (unsigned i = 0; report && i < report->n; i++)
        if (report->checks[i].status > w)
            w = report->checks[i].status;
    return w;
}

const ng_doctor_fact *ng_doctor_inputs(const ng_doctor_report *report, unsigned *n)
{
    *n = report ? report->n_inputs : 0;
    return report ? report->inputs : NULL;
}

void ng_doctor_free(ng_doctor_report *report)
{
    if (report)
        ngi_doctor_report_free(report);
}
