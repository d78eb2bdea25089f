/* libFuzzer target: --omp-guard values (ng_omp_guard_parse / format) and the
 * thread variables they produce (ngi_thread_env).
 * Invariants: round trip through the canonical text; rejections are one
 * printable line; ngi_thread_env never writes past @max, sets each name once,
 * gives every count variable the same decimal value, never lists OMP_PLACES,
 * ends with OMP_PROC_BIND exactly when ,bind was given, and carries the
 * force flag (adaptive's NUMAGUARD_OMP_CORES is always overwritten). */
#include "fuzz_common.h"

static void check_env(const char *in, const ng_omp_guard *g, unsigned threads, int smt)
{
    ng_env_var out[NG_MAX_ENV + 1];
    memset(out, 0x5a, sizeof out);
    int n = ngi_thread_env(g, threads, smt, NULL, out, NG_MAX_ENV);
    if (g->mode == NG_OMP_OFF) {
        FZ_ASSERT(n == 0, "'%s': off produced %d variables", in, n);
        return;
    }
    FZ_ASSERT(n >= 1 && n <= NG_MAX_ENV, "'%s': ngi_thread_env returned %d", in, n);
    /* The canary after the last entry must be untouched. */
    FZ_ASSERT(out[NG_MAX_ENV].name[0] == 0x5a, "'%s': wrote past max", in);
    unsigned want = g->mode == NG_OMP_FIXED ? g->nthreads : (threads ? threads : 1);
    char wantv[16];
    snprintf(wantv, sizeof wantv, "%u", want);
    int counts = n - (g->bind ? 1 : 0);
    for (int i = 0; i < n; i++) {
        FZ_ASSERT(memchr(out[i].name, '\0', sizeof out[i].name) &&
                  memchr(out[i].value, '\0', sizeof out[i].value), "'%s': unterminated", in);
        int gov = (out[i].flags & NG_ENV_GOVERNOR) != 0;
        FZ_ASSERT(gov == (g->mode == NG_OMP_ADAPTIVE && !strcmp(out[i].name, "NUMAGUARD_OMP_CORES")),
                  "'%s': %s governor flag %d", in, out[i].name, gov);
        FZ_ASSERT(out[i].overwrite == (gov ? 1 : g->force), "'%s': overwrite %d force %d", in,
                  out[i].overwrite, g->force);
        FZ_ASSERT(strcmp(out[i].name, "OMP_PLACES") != 0, "'%s': OMP_PLACES listed", in);
        for (int j = 0; j < i; j++)
            FZ_ASSERT(strcmp(out[i].name, out[j].name) != 0, "'%s': %s set twice", in,
                      out[i].name);
        if (i < counts)
            FZ_ASSERT(strcmp(out[i].value, wantv) == 0, "'%s': %s=%s, want %s", in,
                      out[i].name, out[i].value, wantv);
    }
    FZ_ASSERT(!g->bind || (strcmp(out[n - 1].name, "OMP_PROC_BIND") == 0 &&
                           out[n - 1].flags == NG_ENV_BINDING),
              "'%s': last is %s", in, out[n - 1].name);
    /* Too little room: -1, never an overflow (ASan watches the array). */
    ng_env_var *tight = malloc(3 * sizeof *tight);
    FZ_ASSERT(tight, "oom");
    FZ_ASSERT(ngi_thread_env(g, threads, smt, NULL, tight, 3) == -1, "'%s': max 3 accepted", in);
    free(tight);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = fz_cstr(data, size);
    ng_omp_guard g;
    char err[512] = "";
    int rc = ng_omp_guard_parse(in, &g, err, sizeof err);
    FZ_ASSERT(rc == 0 || rc == -1, "rc %d", rc);
    if (rc == 0) {
        FZ_ASSERT(g.mode <= NG_OMP_ADAPTIVE, "'%s': mode %d", in, (int)g.mode);
        if (g.mode == NG_OMP_FIXED)
            FZ_ASSERT(g.nthreads >= 1 && g.nthreads <= NG_MAX_THREADS, "'%s': %u threads", in,
                      g.nthreads);
        char canon[64], canon2[64];
        int n = ngi_omp_guard_format(&g, canon, sizeof canon);
        FZ_ASSERT(n > 0, "'%s': format failed", in);
        ng_omp_guard back;
        FZ_ASSERT(ng_omp_guard_parse(canon, &back, err, sizeof err) == 0,
                  "'%s': canonical '%s' rejected: %s", in, canon, err);
        FZ_ASSERT(back.mode == g.mode && back.force == g.force &&
                  (g.mode != NG_OMP_FIXED || back.nthreads == g.nthreads),
                  "'%s': '%s' parses differently", in, canon);
        FZ_ASSERT(ngi_omp_guard_format(&back, canon2, sizeof canon2) == n &&
                  strcmp(canon, canon2) == 0, "'%s': not idempotent", in);
        /* Thread counts from the input's bytes: 0, small, huge. */
        unsigned threads = size ? (unsigned)data[0] * (size > 1 ? data[size - 1] + 1u : 1u) : 0;
        check_env(in, &g, threads, size & 1);
    } else {
        fz_check_printable("ng_omp_guard_parse", err, sizeof err);
    }
    FZ_ASSERT(ng_omp_guard_parse(in, &g, NULL, 0) == rc, "verdict depends on err == NULL");
    free(in);
    return 0;
}
