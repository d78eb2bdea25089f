/* libFuzzer target: --numa-policy values (ng_policy_parse / ngi_policy_format).
 * Invariants: a parsed policy is well formed, formats to a canonical text
 * that parses back to the same policy (and formats identically again);
 * a rejection is one printable line that fits its buffer; tiny or absent
 * error buffers are safe. */
#include "fuzz_common.h"

static int same_policy(const ng_policy *a, const ng_policy *b)
{
    return a->kind == b->kind && a->mods == b->mods && a->has_nodes == b->has_nodes &&
           memcmp(a->nodes, b->nodes, sizeof a->nodes) == 0;
}

static int any_node(const ng_policy *p)
{
    for (unsigned w = 0; w < NG_NODEMASK_WORDS; w++)
        if (p->nodes[w])
            return 1;
    return 0;
}

static void check_parsed(const char *in, const ng_policy *pol)
{
    FZ_ASSERT((unsigned)pol->kind <= NG_POLICY_NONE, "'%s': kind %d", in, (int)pol->kind);
    FZ_ASSERT(!((pol->mods & NG_MOD_VERBOSE) && (pol->mods & NG_MOD_QUIET)),
              "'%s': verbose and quiet both set", in);
    FZ_ASSERT(pol->has_nodes == any_node(pol), "'%s': has_nodes %d disagrees with the mask", in,
              pol->has_nodes);
    if (pol->has_nodes)
        FZ_ASSERT(pol->kind == NG_POLICY_INTERLEAVE || pol->kind == NG_POLICY_WEIGHTED,
                  "'%s': nodes on policy %s", in, ng_policy_kind_name(pol->kind));
    /* Round trip through the canonical text. Canonical node lists merge
     * ranges and drop leading zeros, so they never outgrow the input. */
    char canon[NG_MAX_ARG * 4], canon2[NG_MAX_ARG * 4], err[512] = "";
    int n = ngi_policy_format(pol, canon, sizeof canon);
    FZ_ASSERT(n > 0 && (size_t)n == strlen(canon), "'%s': format returned %d", in, n);
    FZ_ASSERT(n <= NG_MAX_ARG, "'%s': canonical form is %d bytes", in, n);
    ng_policy back;
    FZ_ASSERT(ng_policy_parse(canon, &back, err, sizeof err) == 0,
              "'%s': canonical '%s' rejected: %s", in, canon, err);
    FZ_ASSERT(same_policy(pol, &back), "'%s': '%s' parses to a different policy", in, canon);
    FZ_ASSERT(ngi_policy_format(&back, canon2, sizeof canon2) == n && strcmp(canon, canon2) == 0,
              "'%s': format not idempotent: '%s' vs '%s'", in, canon, canon2);
    /* A buffer one byte short must fail cleanly (empty string, -1). */
    char *shortbuf = malloc((size_t)n);
    FZ_ASSERT(shortbuf, "oom");
    FZ_ASSERT(ngi_policy_format(pol, shortbuf, (size_t)n) == -1 && shortbuf[0] == '\0',
              "'%s': truncated format did not fail cleanly", in);
    free(shortbuf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = fz_cstr(data, size);
    ng_policy pol;
    char err[512];
    err[0] = '\0';
    int rc = ng_policy_parse(in, &pol, err, sizeof err);
    FZ_ASSERT(rc == 0 || rc == -1, "rc %d", rc);
    if (rc == 0)
        check_parsed(in, &pol);
    else
        fz_check_printable("ng_policy_parse", err, sizeof err);
    /* Small and absent error buffers: same verdict, always terminated. */
    char small[8];
    memset(small, 'X', sizeof small);
    FZ_ASSERT(ng_policy_parse(in, &pol, small, sizeof small) == rc, "verdict depends on errlen");
    if (rc)
        FZ_ASSERT(memchr(small, '\0', sizeof small) != NULL, "small err not terminated");
    FZ_ASSERT(ng_policy_parse(in, &pol, NULL, 0) == rc, "verdict depends on err == NULL");
    free(in);
    return 0;
}
