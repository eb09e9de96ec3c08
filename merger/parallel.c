/* parallel: trace directories reduced to partials by worker processes (parallel.h). */
#include "parallel.h"

#include "partial_read.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct worker {
    int input;    /* index in the inputs */
    pid_t pid;    /* 0: not started or done */
    bool stopped; /* killed because another worker failed */
    int status;   /* exit status once done, -1 before */
    char *partial, *log;
};

static char *path_in(const char *directory, int input, const char *suffix)
{
    size_t size = strlen(directory) + 32;
    char *path = malloc(size);
    if (path)
        snprintf(path, size, "%s/%d.%s", directory, input, suffix);
    return path;
}

/* The worker: --reduce of one input into its partial, its one line (if any) into its log. */
static void run_worker(const struct worker *worker, const struct zm_options *options,
                       zm_supervised_work work)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int log = open(worker->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (log < 0 || null < 0 || dup2(log, STDERR_FILENO) < 0 || dup2(null, STDOUT_FILENO) < 0)
        _exit(2);
    struct zm_options reduce = *options;
    reduce.reduce = true;
    reduce.output = worker->partial;
    /* spans only when the merge keeps them: a tally's workers write (and keep on disk) less */
    reduce.no_spans = options->no_spans || !(options->timeline || options->reduce);
    reduce.timeline = NULL;
    reduce.paths = &options->paths[worker->input];
    reduce.path_count = 1;
    reduce.jobs = 1; /* the cores are the workers': none splits its trace further */
    int status = zm_supervise(work, &reduce, NULL);
    fflush(NULL);
    _exit(status);
}

/* The first line of a worker's log into `reason` (its one "Failed to …" line). */
static void worker_line(const struct worker *worker, const char *input, char *reason,
                        int reason_size)
{
    FILE *log = fopen(worker->log, "r");
    reason[0] = '\0';
    if (log) {
        char line[1024];
        while (fgets(line, sizeof(line), log))
            if (strncmp(line, "Failed to ", 10) == 0) {
                line[strcspn(line, "\n")] = '\0';
                snprintf(reason, (size_t)reason_size, "%s", line);
                break;
            }
        fclose(log);
    }
    if (!reason[0]) {
        char shown[1024];
        zm_supervise_escape_line(shown, sizeof(shown), input);
        snprintf(reason, (size_t)reason_size,
                 "Failed to read trace: path=%s, reason=its reducing worker ended with status %d",
                 shown, worker->status);
    }
}

/* -v: what each worker said, in the inputs' order. */
static void pass_logs(const struct worker *workers, int count)
{
    for (int i = 0; i < count; i++) {
        FILE *log = fopen(workers[i].log, "r");
        if (!log)
            continue;
        char line[1024];
        while (fgets(line, sizeof(line), log))
            fputs(line, stderr);
        fclose(log);
    }
}

static volatile sig_atomic_t terminating; /* a signal that ends the merger, while workers run */

static void on_terminate(int signal_number)
{
    terminating = signal_number;
}

static const int ending_signals[] = {SIGTERM, SIGINT, SIGHUP};
#define ENDING_COUNT (sizeof(ending_signals) / sizeof(*ending_signals))

/* Stops every running worker (each one's supervisor removes its temporary file on SIGTERM) and
 * waits for them. */
static void stop_workers(struct worker *workers, int count)
{
    for (int w = 0; w < count; w++)
        if (workers[w].pid > 0) {
            workers[w].stopped = true;
            kill(workers[w].pid, SIGTERM);
        }
    for (int w = 0; w < count; w++) {
        if (workers[w].pid <= 0)
            continue;
        int wait_status;
        while (waitpid(workers[w].pid, &wait_status, 0) < 0 && errno == EINTR)
            ;
        workers[w].pid = 0;
        workers[w].status =
            WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
    }
}

unsigned zm_parallel_jobs(const struct zm_options *options)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return options->jobs ? (unsigned)options->jobs : cores > 0 ? (unsigned)cores : 1;
}

int zm_parallel_reduce(struct zm_parallel *parallel, struct zm_options *options,
                       zm_supervised_work work, char *reason, int reason_size)
{
    *parallel = (struct zm_parallel){0};
    long jobs = zm_parallel_jobs(options);
    int traces = 0;
    for (int i = 0; i < options->path_count; i++)
        traces += !zm_partial_is_file(options->paths[i]);
    if (options->dump || options->help || options->version || jobs < 2 || traces < 2)
        return 0;

    const char *tmp = getenv("TMPDIR");
    char template[4096];
    snprintf(template, sizeof(template), "%s/zeprof-merge-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    struct worker *workers = calloc((size_t)traces, sizeof(*workers));
    parallel->paths = calloc((size_t)options->path_count + 1, sizeof(*parallel->paths));
    if (!workers || !parallel->paths || !mkdtemp(template) ||
        !(parallel->directory = strdup(template))) {
        snprintf(reason, (size_t)reason_size, "Failed to start: reason=%s",
                 errno ? strerror(errno) : "out of memory");
        free(workers);
        zm_parallel_release(parallel);
        return -1;
    }
    parallel->count = options->path_count;
    int count = 0, status = 0;
    for (int i = 0; i < options->path_count; i++) {
        parallel->paths[i] = options->paths[i];
        if (zm_partial_is_file(options->paths[i]))
            continue;
        struct worker *worker = &workers[count++];
        *worker = (struct worker){.input = i,
                                  .status = -1,
                                  .partial = path_in(parallel->directory, i, "partial"),
                                  .log = path_in(parallel->directory, i, "log")};
        if (!worker->partial || !worker->log)
            status = -1;
        parallel->paths[i] = worker->partial;
    }
    if (status != 0) {
        snprintf(reason, (size_t)reason_size, "Failed to start: reason=out of memory");
        for (int w = 0; w < count; w++)
            free(workers[w].log);
        free(workers);
        zm_parallel_release(parallel);
        return -1;
    }
    fflush(NULL); /* nothing buffered is written twice by the workers */
    /* SIGTERM, SIGINT or SIGHUP while workers run: stop them, remove the partials, then end by
     * the same signal (as the supervisor does for the merge itself). */
    struct sigaction action = {.sa_handler = on_terminate}, previous[ENDING_COUNT];
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < ENDING_COUNT; i++)
        sigaction(ending_signals[i], &action, &previous[i]);
    int next = 0, running = 0;
    bool stopping = false;
    while (next < count || running > 0) {
        while (!stopping && next < count && running < jobs) {
            struct worker *worker = &workers[next++];
            worker->pid = fork();
            if (worker->pid == 0)
                run_worker(worker, options, work);
            if (worker->pid < 0) {
                worker->pid = 0;
                worker->status = 2;
                stopping = true;
                break;
            }
            running++;
        }
        if (running == 0)
            break;
        int wait_status;
        pid_t done = waitpid(-1, &wait_status, WNOHANG);
        if (terminating) {
            stop_workers(workers, count);
            for (int w = 0; w < count; w++) {
                unlink(workers[w].log);
                free(workers[w].log);
            }
            free(workers);
            zm_parallel_release(parallel);
            signal(terminating, SIG_DFL);
            raise(terminating);
            _exit(128 + terminating);
        }
        if (done == 0) { /* none finished: look again soon (a signal cuts the sleep short) */
            nanosleep(&(struct timespec){.tv_nsec = 5000000}, NULL);
            continue;
        }
        if (done < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (int w = 0; w < count; w++) {
            if (workers[w].pid != done)
                continue;
            workers[w].pid = 0;
            workers[w].status =
                WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
            running--;
            if (workers[w].status != 0 && !stopping) {
                stopping = true; /* the others' work is wasted: stop them */
                stop_workers(workers, count);
                running = 0;
            }
        }
    }
    for (size_t i = 0; i < ENDING_COUNT; i++)
        sigaction(ending_signals[i], &previous[i], NULL);
    /* The first input whose worker failed by itself (not stopped by us) says why. */
    for (int pass = 0; pass < 2 && status == 0; pass++)
        for (int w = 0; w < count && status == 0; w++)
            if (workers[w].status > 0 && (pass == 1 || !workers[w].stopped)) {
                worker_line(&workers[w], options->paths[workers[w].input], reason, reason_size);
                status = -1;
            }
    if (status == 0 && stopping) {
        snprintf(reason, (size_t)reason_size, "Failed to start: reason=cannot start a worker");
        status = -1;
    }
    if (status == 0 && options->verbose)
        pass_logs(workers, count);
    for (int w = 0; w < count; w++) {
        if (workers[w].log)
            unlink(workers[w].log);
        free(workers[w].log);
    }
    if (status == 0) {
        options->named = options->paths;
        options->paths = parallel->paths;
    }
    /* the partials' names stay in parallel->paths, removed by zm_parallel_release */
    free(workers);
    if (status != 0)
        zm_parallel_release(parallel);
    return status;
}

/* Removes every file in the workers' directory, then the directory. Not only the partials named
 * in paths: a worker stopped at the wrong moment may leave its writer's temporary file, which its
 * supervisor had not been told of yet (the directory is ours alone, made by mkdtemp). */
static void remove_directory(const char *directory)
{
    DIR *listing = opendir(directory);
    if (listing) {
        int fd = dirfd(listing);
        for (struct dirent *entry; (entry = readdir(listing));)
            if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0)
                unlinkat(fd, entry->d_name, 0);
        closedir(listing);
    }
    rmdir(directory);
}

void zm_parallel_release(struct zm_parallel *parallel)
{
    if (parallel->directory) {
        for (int i = 0; parallel->paths && i < parallel->count; i++) {
            const char *path = parallel->paths[i];
            size_t length = strlen(parallel->directory);
            if (path && strncmp(path, parallel->directory, length) == 0 && path[length] == '/')
                free((char *)path);
        }
        remove_directory(parallel->directory);
    }
    free(parallel->directory);
    free(parallel->paths);
    *parallel = (struct zm_parallel){0};
}
