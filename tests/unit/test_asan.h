/*
 * UNDER_ASAN: 1 when the tests are built with AddressSanitizer (make asan), else 0. Tests
 * that provoke a stack overflow are skipped under it, and deep stacks are kept smaller,
 * since ASan owns the signal handlers and makes frames larger.
 */
#ifndef TEST_ASAN_H
#define TEST_ASAN_H

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#if !defined(UNDER_ASAN) && defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#endif
