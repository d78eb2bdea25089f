/* ng_parse_uint (lib/base/strings.c): the one reader of a number a person
 * (CLI options) or a launcher (rank and size variables) wrote. */
#include "numaguard.h"
#include "tap.h"

static void is(const char *s, unsigned long max, long want)
{
    long got = ng_parse_uint(s, max);
    ok(got == want, "ng_parse_uint(\"%s\", %lu) = %ld (got %ld)", s ? s : "(null)", max, want,
       got);
}

int main(void)
{
    is("0", 10, 0);
    is("7", 10, 7);
    is("10", 10, 10);
    is("11", 10, -1);
    is("007", 10, 7);
    is("4294967295", 4294967295ul, 4294967295l);
    is("12345678901", 99999999999ul, -1); /* more than 10 digits */
    is("99999999999999999999", ~0ul, -1);
    is("", 10, -1);
    is(NULL, 10, -1);
    is("-1", 10, -1);
    is("+1", 10, -1);
    is(" 1", 10, -1);
    is("1 ", 10, -1);
    is("1x", 10, -1);
    is("0x1", 10, -1);
    is("1.0", 10, -1);
    return tap_done();
}
