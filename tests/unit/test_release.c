/* Big blocks freed behind (sim/util/release.c): every block handed over is freed, behind the
 * caller or at once. Seen through glibc's count of the bytes of the blocks it mapped on
 * their own (mallinfo2's hblkhd), as blocks this big are: it falls as each is freed. */
#include "sim/util/release.h"

#include <criterion/criterion.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

/* Past glibc's largest mmap threshold (32 MB): always a mapping of its own. */
enum { BIG = 40 << 20 };

/* Under ASan the allocator is the sanitizer's, which glibc's count does not see. */
static void need_plain_malloc(void)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("a sanitizer's allocator keeps freed blocks mapped");
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    cr_skip_test("a sanitizer's allocator keeps freed blocks mapped");
#endif
#endif
}

/* The bytes of the blocks glibc mapped on their own. */
static size_t held(void)
{
    return mallinfo2().hblkhd;
}

/* Wait up to 10 s for the blocks held to fall to at most want: whether they did. */
static bool falls_to(size_t want)
{
    for (int tries = 0; tries < 1000 && held() > want; tries++)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    return held() <= want;
}

/* Hand r n new blocks (each one's last byte written when touch). */
static void hand_over(struct sim_release *r, size_t n, bool touch)
{
    for (size_t i = 0; i < n; i++) {
        char *p = malloc(BIG);
        cr_assert_not_null(p);
        if (touch)
            p[BIG - 1] = 1;
        sim_release_add(r, p);
    }
}

Test(release, blocks_handed_over_are_freed_behind_the_caller)
{
    need_plain_malloc();
    struct sim_release r = {0};
    size_t before = held();
    hand_over(&r, 4, true);
    sim_release_add(&r, NULL); /* nothing */
    cr_assert_eq(r.n, 4);
    cr_assert_geq(held(), before + 4 * (size_t)BIG, "held until handed over");
    sim_release_go(&r, true);
    cr_assert_eq(r.n, 0, "emptied");
    cr_assert(falls_to(before), "every block freed: %zu bytes left of %zu", held(), before);
}

Test(release, blocks_not_sent_behind_are_freed_before_the_call_returns)
{
    need_plain_malloc();
    struct sim_release r = {0};
    size_t before = held();
    hand_over(&r, 3, false);
    cr_assert_geq(held(), before + 3 * (size_t)BIG);
    sim_release_go(&r, false);
    cr_assert_eq(r.n, 0);
    cr_assert_leq(held(), before, "every block freed already");
}

Test(release, blocks_past_its_room_are_freed_at_once_and_the_rest_behind)
{
    need_plain_malloc();
    struct sim_release r = {0};
    size_t before = held();
    hand_over(&r, SIM_RELEASE_MAX + 2, false); /* (not touched: address space alone) */
    cr_assert_eq(r.n, SIM_RELEASE_MAX);
    /* (each block a page more than it asked for: its header) */
    cr_assert(held() >= before + SIM_RELEASE_MAX * (size_t)BIG &&
                  held() < before + (SIM_RELEASE_MAX + 1) * (size_t)BIG,
              "the two past its room freed as added, the rest held");
    sim_release_go(&r, true);
    cr_assert(falls_to(before), "the rest freed behind");
}

Test(release, nothing_handed_over_is_nothing_to_do)
{
    struct sim_release r = {0};
    sim_release_go(&r, true);
    sim_release_go(&r, false);
    cr_assert_eq(r.n, 0);
}
