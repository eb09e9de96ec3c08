/*
 * parallel: -J, several trace directories reduced at once (docs/merger.md "Partials").
 *
 * Before the merge, each trace directory among the inputs is reduced to a partial in a private
 * temporary directory by a worker process (a fork running the same supervised work with
 * --reduce), at most N at a time; the merge then reads the partials in the inputs' order, so its
 * output is the same for every N. Partials given as inputs are read as they are. A failing worker
 * stops the others; the line reported is that of the first input (in order) whose worker failed.
 * Owns the temporary directory and the rewritten path list.
 */
#ifndef ZM_PARALLEL_H
#define ZM_PARALLEL_H

#include "must_check.h"
#include "options.h"
#include "supervise.h"

struct zm_parallel {
    char *directory;    /* Owned by this: the partials' directory, or NULL when not used */
    const char **paths; /* Owned by this: the inputs, trace directories replaced by partials */
    int count;
};

/* Reduces the trace directories of `options` with `work` (main.c's supervised merge) when there
 * are at least two and -J allows two workers (not with -t), and points options->paths at the
 * partials. 0 (also when nothing was done), or -1 with the one line in `reason`. */
ZM_MUST_CHECK int zm_parallel_reduce(struct zm_parallel *parallel, struct zm_options *options,
                                     zm_supervised_work work, char *reason, int reason_size);
/* -J's number of workers: its N, or one per online core. */
unsigned zm_parallel_jobs(const struct zm_options *options);
/* Removes the partials and their directory. */
void zm_parallel_release(struct zm_parallel *parallel);

#endif
