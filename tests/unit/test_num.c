/* Checked numbers from text (sim/util/num.h): what /proc, a worker's lines and the
 * environment are read with. */
#include "sim/util/num.h"

#include <criterion/criterion.h>
#include <limits.h>

Test(num, an_unsigned_number_after_blanks_in_its_base_within_its_bound)
{
    const char *s = "  12 7f-ff";
    unsigned long long v = 0;
    cr_assert(sim_take_unsigned(&s, 10, ULLONG_MAX, &v));
    cr_assert_eq(v, 12);
    cr_assert_str_eq(s, " 7f-ff", "past the number, not its blanks after");
    cr_assert(sim_take_unsigned(&s, 16, 0x7f, &v));
    cr_assert_eq(v, 0x7f);
    cr_assert_eq(*s, '-');
    const char *at = s;
    cr_assert_not(sim_take_unsigned(&s, 16, ULLONG_MAX, &v), "a sign: none taken");
    cr_assert_eq(s, at, "left where it was");
    s = "ff";
    cr_assert_not(sim_take_unsigned(&s, 16, 0xfe, &v), "past its bound");
    s = "18446744073709551616"; /* 2^64 */
    cr_assert_not(sim_take_unsigned(&s, 10, ULLONG_MAX, &v), "too big for any");
    s = "  \n";
    cr_assert_not(sim_take_unsigned(&s, 10, ULLONG_MAX, &v), "no number");
    s = "+5";
    cr_assert_not(sim_take_unsigned(&s, 10, ULLONG_MAX, &v), "a plus sign");
}

Test(num, an_int_signed_or_not_within_an_int)
{
    const char *s = "-42:7";
    int v = 0;
    cr_assert(sim_take_int(&s, &v));
    cr_assert_eq(v, -42);
    cr_assert_eq(*s, ':');
    s++;
    cr_assert(sim_take_int(&s, &v));
    cr_assert_eq(v, 7);
    cr_assert_eq(*s, '\0');
    s = "2147483648";
    const char *at = s;
    cr_assert_not(sim_take_int(&s, &v), "past INT_MAX");
    cr_assert_eq(s, at);
    s = "x1";
    cr_assert_not(sim_take_int(&s, &v), "no number");
}
