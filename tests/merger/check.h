/* check.h: the smallest test helper. CHECK(cond) reports the failing line and counts it;
 * test programs return check_status() so that meson sees a failure. */
#ifndef ZM_TEST_CHECK_H
#define ZM_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>

static int check_failures;

#define CHECK(condition)                                                                           \
    do {                                                                                           \
        if (!(condition)) {                                                                        \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition);          \
            check_failures++;                                                                      \
        }                                                                                          \
    } while (0)

#define CHECK_EQ(actual, expected)                                                                 \
    do {                                                                                           \
        long long check_a = (long long)(actual), check_e = (long long)(expected);                  \
        if (check_a != check_e) {                                                                  \
            fprintf(stderr, "%s:%d: %s is %lld, expected %lld\n", __FILE__, __LINE__, #actual,     \
                    check_a, check_e);                                                             \
            check_failures++;                                                                      \
        }                                                                                          \
    } while (0)

#define RUN(test)                                                                                  \
    do {                                                                                           \
        int check_before = check_failures;                                                         \
        test();                                                                                    \
        printf("%s %s\n", check_failures == check_before ? "ok" : "FAILED", #test);                \
    } while (0)

static inline int check_status(void)
{
    return check_failures ? 1 : 0;
}

#endif
