/* --net-affinity: the grammar and the admin's NIC filter (net_allow= /
 * net_deny=). Which NICs each task gets is the planner's (lib/plan/net.c).
 * Rules and their reasons: docs/network.md. */
#include "private/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NET_OPT "--net-affinity"
#define NET_FORMS "expected auto, off, or a NIC count 1-64, optionally followed by ,force " \
                  "and/or ,nccl-per-rank"

/* ---------------- grammar ---------------- */

static int net_bad(const char *text, size_t len, const char *why, const char *item, size_t ilen,
                   char *err, size_t errlen)
{
    char v[NGI_SHOW_MAX * 4 + 8], it[NGI_SHOW_MAX * 4 + 8] = "", reason[sizeof it + 64];
    ngi_show_bytes(text, len, v, sizeof v);
    if (item)
        ngi_show_bytes(item, ilen, it, sizeof it);
    snprintf(reason, sizeof reason, why, it);
    return ngi_fail(err, errlen, NET_OPT ": invalid value '%s': %s; " NET_FORMS, v, reason);
}

static int is_word(const char *t, size_t tlen, const char *w)
{
    return tlen == strlen(w) && strncmp(t, w, tlen) == 0;
}

/* The head item: auto | off | N (1-64, no sign, no leading zero). */
static int net_head(const char *text, size_t len, const char *h, size_t hlen, ng_net_affinity *a,
                    char *err, size_t errlen)
{
    if (is_word(h, hlen, "auto") || is_word(h, hlen, "off")) {
        a->mode = h[0] == 'a' ? NG_NET_AUTO : NG_NET_OFF;
        return 0;
    }
    if (hlen == 0)
        return net_bad(text, len, "empty item%s", NULL, 0, err, errlen);
    unsigned v = 0;
    for (size_t i = 0; i < hlen; i++) {
        if (h[i] < '0' || h[i] > '9')
            return net_bad(text, len, "unknown item '%s'", h, hlen, err, errlen);
        v = v * 10 + (unsigned)(h[i] - '0');
        if (v > NG_MAX_NICS)
            break;
    }
    if (h[0] == '0' || v < 1 || v > NG_MAX_NICS)
        return net_bad(text, len, "NIC count '%s' out of range", h, hlen, err, errlen);
    a->mode = NG_NET_COUNT;
    a->count = v;
    return 0;
}

static int net_modifier(const char *text, size_t len, const char *t, size_t tlen,
                        ng_net_affinity *a, char *err, size_t errlen)
{
    int *flag = is_word(t, tlen, "force") ? &a->force
              : is_word(t, tlen, "nccl-per-rank") ? &a->nccl_per_rank : NULL;
    if (tlen == 0)
        return net_bad(text, len, "empty item%s", NULL, 0, err, errlen);
    if (!flag)
        return net_bad(text, len, "unknown item '%s' (only force and nccl-per-rank may follow)",
                       t, tlen, err, errlen);
    if (*flag)
        return net_bad(text, len, "'%s' given twice", t, tlen, err, errlen);
    *flag = 1;
    return 0;
}

int ng_net_affinity_parse(const char *text, ng_net_affinity *out, char *err, size_t errlen)
{
    ng_net_affinity a = {NG_NET_OFF, 0, 0, 0};
    if (!out)
        return ngi_fail(err, errlen, NET_OPT ": no output");
    if (!text || !*text) {
        *out = a;
        return 0;
    }
    size_t len = strnlen(text, NG_MAX_ARG + 1);
    if (len > NG_MAX_ARG)
        return net_bad(text, len, "longer than 1024 bytes%s", NULL, 0, err, errlen);
    size_t hlen = strcspn(text, ",");
    const char *t = text;
    /* A modifier alone ("force", "nccl-per-rank,force") means auto with it. */
    if (is_word(text, hlen, "force") || is_word(text, hlen, "nccl-per-rank")) {
        a.mode = NG_NET_AUTO;
    } else {
        if (net_head(text, len, text, hlen, &a, err, errlen) < 0)
            return -1;
        t = text[hlen] == ',' ? text + hlen + 1 : text + hlen;
        if (text[hlen] == ',' && *t == '\0')
            return net_bad(text, len, "empty item%s", NULL, 0, err, errlen);
    }
    while (*t) {
        size_t tlen = strcspn(t, ",");
        if (net_modifier(text, len, t, tlen, &a, err, errlen) < 0)
            return -1;
        t += tlen;
        if (*t == ',' && *++t == '\0')
            return net_bad(text, len, "empty item%s", NULL, 0, err, errlen);
    }
    if (a.mode == NG_NET_OFF && (a.force || a.nccl_per_rank))
        return net_bad(text, len, "off sets nothing, so a modifier makes no sense%s", NULL, 0,
                       err, errlen);
    *out = a;
    return 0;
}

int ngi_net_affinity_format(const ng_net_affinity *a, char *buf, size_t len)
{
    if (!buf || !len)
        return -1;
    buf[0] = '\0';
    if (!a || (a->mode == NG_NET_COUNT && (a->count < 1 || a->count > NG_MAX_NICS)) ||
        (a->mode == NG_NET_OFF && (a->force || a->nccl_per_rank)))
        return -1;
    char head[16];
    if (a->mode == NG_NET_COUNT)
        snprintf(head, sizeof head, "%u", a->count);
    else
        snprintf(head, sizeof head, "%s", a->mode == NG_NET_AUTO ? "auto" : "off");
    int n = snprintf(buf, len, "%s%s%s", head, a->force ? ",force" : "",
                     a->nccl_per_rank ? ",nccl-per-rank" : "");
    return n < 0 || (size_t)n >= len ? -1 : n;
}

/* ---------------- the admin's filter ---------------- */

/* A NIC name entry: [A-Za-z0-9_.:-]+, optionally ending in '*'. */
static int filter_check(const char *key, const char *list, char *err, size_t errlen)
{
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        size_t body = n && p[n - 1] == '*' ? n - 1 : n;
        int ok = body > 0 && body < NG_NIC_NAME_LEN;
        for (size_t i = 0; ok && i < body; i++)
            ok = (p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
                 (p[i] >= '0' && p[i] <= '9') || p[i] == '_' || p[i] == '.' || p[i] == '-';
        if (!ok) {
            char show[NGI_SHOW_MAX * 4 + 8];
            ngi_show_bytes(p, n, show, sizeof show);
            return ngi_fail(err, errlen, "%s: invalid NIC name '%s'; expected a comma list of "
                           "names such as mlx5_0 or ib0, an entry ending in * matching a prefix "
                           "(mlx5_*)", key, show);
        }
        p += n;
        if (*p == ',' && *++p == '\0')
            return ngi_fail(err, errlen, "%s: empty entry at the end of the list", key);
    }
    return 0;
}

int ng_nic_filter_parse(const char *allow, const char *deny, ng_nic_filter *out, char *err,
                        size_t errlen)
{
    ng_nic_filter f;
    memset(&f, 0, sizeof f);
    if (!out)
        return ngi_fail(err, errlen, "ng_nic_filter_parse: no output");
    if ((allow && ngi_strlcpy(f.allow, allow, sizeof f.allow) < 0) ||
        (deny && ngi_strlcpy(f.deny, deny, sizeof f.deny) < 0))
        return ngi_fail(err, errlen, "net_allow/net_deny: longer than %d bytes", NG_MAX_ARG - 1);
    if (filter_check("net_allow", f.allow, err, errlen) < 0 ||
        filter_check("net_deny", f.deny, err, errlen) < 0)
        return -1;
    *out = f;
    return 0;
}

static int entry_matches(const char *e, size_t n, const char *name)
{
    if (!*name)
        return 0;
    if (n && e[n - 1] == '*')
        return strncmp(name, e, n - 1) == 0;
    return strlen(name) == n && strncmp(name, e, n) == 0;
}

static int list_matches(const char *list, const ng_nic_info *ni)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (entry_matches(p, n, ni->name) || entry_matches(p, n, ni->netdev))
            return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

int ng_nic_filter_admits(const ng_nic_filter *f, const ng_nic_info *ni)
{
    if (!ni)
        return 0;
    if (f && list_matches(f->deny, ni))
        return 0;
    if (f && f->allow[0])
        return list_matches(f->allow, ni);
    return ni->rdma; /* default: verbs devices only, never a management Ethernet port */
}
