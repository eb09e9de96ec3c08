/*
 * supervise: runs the merge in a child process and turns every way it can end badly into the
 * one "Failed to …" line and exit 2.
 *
 * libbabeltrace2 aborts (assertions) or loops forever on some corrupt traces; neither can be
 * caught in-process. The parent forks once; the child does all the work (decoding, tally,
 * timeline) and reports its own failures through a shared page. The parent only watches:
 *   - a child killed by a signal (SIGABRT, SIGSEGV…) becomes "…, reason=the CTF decoder crashed";
 *   - a child whose heartbeat (zm_supervise_progress: per batch of messages, span, record, step)
 *     stops while reading traces, for the stall limit in CPU time (a loop) or six times that in
 *     wall time (blocked), is killed and becomes "…, reason=… made no progress …";
 *   - SIGTERM, SIGINT or SIGHUP to the parent kill the child, remove its temporary file and end
 *     the parent by the same signal;
 *   - the child dies with the parent (PR_SET_PDEATHSIG), so a SIGKILLed merger leaves no worker.
 * The child's stderr is a pipe to the parent (libbabeltrace2's assertion text lands there, not
 * on the user's terminal); messages of our own meant for the user go to zm_supervise_log().
 * The context of the line ("Failed to read trace: path=…") is set by the child as it goes, so a
 * crash is reported against what was being done.
 */
#ifndef ZM_SUPERVISE_H
#define ZM_SUPERVISE_H

#include "must_check.h"

#include <stdio.h>

/* The work: returns the exit status (0, or 2 with `line` holding the one "Failed to …" line). */
typedef int (*zm_supervised_work)(void *context, char *line, int line_size);

/* Runs `work` in a supervised child and returns the exit status for main(); prints the failure
 * line itself. `incomplete_output`: a failure is said to cut short what was printed (-t). Without
 * fork (or with ZEPROF_MERGE_UNSUPERVISED=1, for debugging) runs `work` in this process. */
ZM_MUST_CHECK int zm_supervise(zm_supervised_work work, void *context,
                               const char *incomplete_output);

/* Child side; each does nothing outside a supervised child. */
void zm_supervise_progress(void);
/* What is being done, as the head of a failure line: "Failed to read trace: path=…". */
void zm_supervise_context(const char *line_head);
/* A named temporary file the parent removes if the child dies (NULL: none any more). */
void zm_supervise_temp_file(const char *path);
/* A temporary directory of the child's own that the parent removes, with all in it, if the
 * child dies (NULL: none any more). */
void zm_supervise_temp_dir(const char *path);
/* Removes the directory tree at `path`, following no links. */
void zm_supervise_remove_tree(const char *path);
/* Around the reading of traces (libbabeltrace2 inside): only then does a stopped heartbeat count
 * as a stall. Our own later phases (placement, timeline, tally) are only crash-contained. */
void zm_supervise_watch(int watching);
/* Around writes that may block on the reader (a pipe to `less`, a FIFO): no stall while inside. */
void zm_supervise_output_wait(int waiting);
/* Output meant for stdout has begun (-t): a later failure says it is incomplete. */
void zm_supervise_output_started(void);
/* Where our own messages for the user go (-v): the real stderr. */
FILE *zm_supervise_log(void);

/* `text` made safe for a one-line message: control characters as \n, \t, \xNN. */
void zm_supervise_escape_line(char *out, size_t size, const char *text);

#endif
