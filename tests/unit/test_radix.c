/* The stable radix sort by a 64-bit key (trace/model/radix.h): empty and single arrays, equal
 * keys in their first order, keys that need every digit, records of every size the analyses
 * use and of an odd one, against a stable comparison sort of the same records. */
#include "trace/model/radix.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* A record of the sizes the callers use: a key, where it was (to see stability), padding. */
struct rec24 {
    uint32_t pad;
    uint32_t at; /* position before the sort */
    uint64_t key;
    uint64_t more;
};

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Sorted by key, and equal keys in their first order. */
static void assert_stable(const struct rec24 *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        cr_assert(v[i - 1].key <= v[i].key, "keys out of order at %zu", i);
        if (v[i - 1].key == v[i].key)
            cr_assert(v[i - 1].at < v[i].at, "equal keys reordered at %zu", i);
    }
}

static struct rec24 *records(size_t n, uint64_t (*key)(size_t i))
{
    struct rec24 *v = calloc(n ? n : 1, sizeof(*v));
    for (size_t i = 0; i < n; i++)
        v[i] = (struct rec24){.at = (uint32_t)i, .key = key(i), .more = ~(uint64_t)i};
    return v;
}

static uint64_t key_random(size_t i)
{
    (void)i;
    return rnd();
}

static uint64_t key_few(size_t i)
{
    (void)i;
    return rnd() % 5 + 1000;
}

Test(radix, empty_and_single)
{
    trace_radix_sort(NULL, 0, sizeof(struct rec24), offsetof(struct rec24, key));
    struct rec24 one = {.at = 7, .key = 42, .more = 9};
    trace_radix_sort(&one, 1, sizeof(one), offsetof(struct rec24, key));
    cr_assert(one.at == 7 && one.key == 42 && one.more == 9);
}

Test(radix, equal_keys_keep_their_order_few_and_many)
{
    size_t sizes[] = {5, 31, 200, 70000};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        struct rec24 *v = records(sizes[s], key_few);
        trace_radix_sort(v, sizes[s], sizeof(*v), offsetof(struct rec24, key));
        assert_stable(v, sizes[s]);
        for (size_t i = 0; i < sizes[s]; i++)
            cr_assert(v[i].more == ~(uint64_t)v[i].at, "a record's other fields moved with it");
        free(v);
    }
}

Test(radix, all_equal_keys_are_left_alone)
{
    struct rec24 *v = records(100000, key_few);
    for (size_t i = 0; i < 100000; i++)
        v[i].key = 5;
    trace_radix_sort(v, 100000, sizeof(*v), offsetof(struct rec24, key));
    for (size_t i = 0; i < 100000; i++)
        cr_assert(v[i].at == i);
    free(v);
}

Test(radix, keys_over_the_whole_range_need_every_digit)
{
    /* random 64-bit keys with 0 and the maximum among them: 4 passes of 16 bits (and 8 of 8
     * bits for fewer records) */
    size_t sizes[] = {1000, 150000};
    for (size_t s = 0; s < 2; s++) {
        size_t n = sizes[s];
        struct rec24 *v = records(n, key_random);
        v[n / 3].key = 0;
        v[n / 2].key = UINT64_MAX;
        v[n - 1].key = v[0].key; /* an equal pair far apart */
        trace_radix_sort(v, n, sizeof(*v), offsetof(struct rec24, key));
        assert_stable(v, n);
        cr_assert(v[0].key == 0 && v[n - 1].key == UINT64_MAX);
        free(v);
    }
}

Test(radix, keys_differing_only_in_their_top_digit)
{
    size_t n = 70000;
    struct rec24 *v = records(n, key_few);
    for (size_t i = 0; i < n; i++)
        v[i].key = (rnd() % 3) << 60 | 12345; /* the low digits all shared: skipped */
    trace_radix_sort(v, n, sizeof(*v), offsetof(struct rec24, key));
    assert_stable(v, n);
    free(v);
}

Test(radix, plain_keys_and_records_of_other_sizes)
{
    size_t n = 100000;
    uint64_t *k = malloc(n * sizeof(*k));
    for (size_t i = 0; i < n; i++)
        k[i] = rnd() >> (i % 40);
    trace_radix_sort_u64(k, n);
    for (size_t i = 1; i < n; i++)
        cr_assert(k[i - 1] <= k[i]);
    free(k);
    /* 16- and 40-byte records, the key first and last */
    struct r16 {
        uint64_t key, at;
    } *a = malloc(n * sizeof(*a));
    struct r40 {
        uint64_t at, x[3], key;
    } *b = malloc(n * sizeof(*b));
    for (size_t i = 0; i < n; i++) {
        a[i] = (struct r16){rnd() % 1000, i};
        b[i] = (struct r40){.at = i, .key = rnd() % 100000};
    }
    trace_radix_sort(a, n, sizeof(*a), 0);
    trace_radix_sort(b, n, sizeof(*b), offsetof(struct r40, key));
    for (size_t i = 1; i < n; i++) {
        cr_assert(a[i - 1].key < a[i].key || (a[i - 1].key == a[i].key && a[i - 1].at < a[i].at));
        cr_assert(b[i - 1].key < b[i].key || (b[i - 1].key == b[i].key && b[i - 1].at < b[i].at));
    }
    free(a);
    free(b);
}

Test(radix, sorted_and_reversed_input)
{
    size_t n = 5000;
    uint64_t *k = malloc(n * sizeof(*k));
    for (size_t i = 0; i < n; i++)
        k[i] = i / 2;
    trace_radix_sort_u64(k, n);
    for (size_t i = 0; i < n; i++)
        cr_assert(k[i] == i / 2);
    for (size_t i = 0; i < n; i++)
        k[i] = n - i;
    trace_radix_sort_u64(k, n);
    for (size_t i = 0; i < n; i++)
        cr_assert(k[i] == i + 1);
    free(k);
}

Test(radix, nearly_sorted_input_with_a_reversed_stretch)
{
    /* in order but for a few swapped neighbours (as a trace's ops in the order they were
     * written), equal keys among them, and one stretch reversed (more moves than the
     * nearly-sorted path allows for its bucket) */
    size_t n = 200000;
    struct rec24 *v = records(n, key_few);
    for (size_t i = 0; i < n; i++)
        v[i].key = (uint64_t)i / 3 * 1000;
    for (size_t i = 0; i + 1 < n; i += 97) {
        uint64_t t = v[i].key;
        v[i].key = v[i + 1].key, v[i + 1].key = t;
    }
    for (size_t i = 0; i < 2000; i++)
        v[100000 + i].key = 33333000 - i;
    trace_radix_sort(v, n, sizeof(*v), offsetof(struct rec24, key));
    assert_stable(v, n);
    free(v);
}
