/*
 * must_check: ZM_MUST_CHECK marks a merger function whose result says whether it failed (-1, or
 * NULL for a constructor): ignoring it would lose an error or a reference, so the compiler warns,
 * and -Werror makes that a build failure. A caller with nothing left to do about a failure still
 * tests the result and says why in a comment (a (void) cast does not silence GCC here).
 * A macro only: it owns and borrows nothing.
 */
#ifndef ZM_MUST_CHECK_H
#define ZM_MUST_CHECK_H

#define ZM_MUST_CHECK __attribute__((warn_unused_result))

#endif
