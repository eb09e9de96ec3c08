/* supervise: the merge in a watched child; crashes and stalls become one line (supervise.h). */
#include "supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LINE_SIZE 2048
#define DEFAULT_STALL_SECONDS 10
#define WALL_FACTOR 6 /* a child blocked without using CPU gets this many times longer */
#define CAPTURE_SIZE 16384 /* the child's stderr kept for relaying (sanitizer reports) */

/* The page shared by parent and child (MAP_SHARED before fork). */
struct shared {
    atomic_uint_fast64_t heartbeat;
    atomic_int output_started;
    atomic_int output_waiting; /* blocked on a reader, not stalled */
    atomic_int watching;       /* reading traces: a stopped heartbeat is a stall */
    char line_head[LINE_SIZE];
    char line[LINE_SIZE];
    char temp_path[PATH_MAX + 32];
    char temp_dir[PATH_MAX + 32];
};

static struct shared *shared; /* set in both processes; the child is the only writer */
static bool in_child;
static FILE *log_stream; /* the child's way to the real stderr */
static volatile sig_atomic_t terminating;

void zm_supervise_progress(void)
{
    if (in_child)
        atomic_fetch_add_explicit(&shared->heartbeat, 1, memory_order_relaxed);
}

void zm_supervise_context(const char *line_head)
{
    if (in_child) {
        snprintf(shared->line_head, sizeof(shared->line_head), "%s", line_head);
        zm_supervise_progress();
    }
}

void zm_supervise_temp_file(const char *path)
{
    if (in_child)
        snprintf(shared->temp_path, sizeof(shared->temp_path), "%s", path ? path : "");
}

void zm_supervise_temp_dir(const char *path)
{
    if (in_child)
        snprintf(shared->temp_dir, sizeof(shared->temp_dir), "%s", path ? path : "");
}

static int remove_entry(const char *path, const struct stat *info, int type, struct FTW *where)
{
    (void)info;
    (void)where;
    if (type == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

void zm_supervise_remove_tree(const char *path)
{
    nftw(path, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

void zm_supervise_watch(int watching)
{
    if (in_child) {
        atomic_store(&shared->watching, watching != 0);
        zm_supervise_progress();
    }
}

void zm_supervise_output_wait(int waiting)
{
    if (in_child) {
        atomic_store(&shared->output_waiting, waiting != 0);
        zm_supervise_progress();
    }
}

void zm_supervise_output_started(void)
{
    if (in_child)
        atomic_store(&shared->output_started, 1);
}

FILE *zm_supervise_log(void)
{
    return log_stream ? log_stream : stderr;
}

void zm_supervise_escape_line(char *out, size_t size, const char *text)
{
    size_t n = 0;
    if (size == 0)
        return;
    for (const unsigned char *c = (const unsigned char *)text; *c && n + 5 < size; c++) {
        if (*c == '\n' || *c == '\r' || *c == '\t')
            n += (size_t)snprintf(out + n, size - n, "\\%c",
                                  *c == '\n' ? 'n' : *c == '\r' ? 'r' : 't');
        else if (*c < 0x20 || *c == 0x7f)
            n += (size_t)snprintf(out + n, size - n, "\\x%02x", *c);
        else
            out[n++] = (char)*c;
    }
    out[n] = '\0';
}

static unsigned stall_seconds(void)
{
    const char *text = getenv("ZEPROF_MERGE_STALL_SECONDS");
    if (text && *text) {
        char *end;
        unsigned long value = strtoul(text, &end, 10);
        if (!*end && value > 0 && value < 86400)
            return (unsigned)value;
    }
    return DEFAULT_STALL_SECONDS;
}

static double seconds_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* CPU seconds the child has used (user + system), from /proc; -1 if unknown. A loop burns CPU;
 * a loaded machine only stretches wall time, so the watchdog counts CPU first. */
static double cpu_seconds_of(pid_t pid)
{
    char path[64], text[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *file = fopen(path, "r");
    if (!file)
        return -1;
    size_t length = fread(text, 1, sizeof(text) - 1, file);
    fclose(file);
    text[length] = '\0';
    const char *after_name = strrchr(text, ')'); /* the command name may hold spaces */
    unsigned long user, system;
    if (!after_name ||
        sscanf(after_name + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &user,
               &system) != 2)
        return -1;
    return (double)(user + system) / (double)sysconf(_SC_CLK_TCK);
}

static void on_terminate(int signal_number)
{
    terminating = signal_number;
}

static const int forwarded_signals[] = {SIGTERM, SIGINT, SIGHUP};
#define FORWARDED_COUNT (sizeof(forwarded_signals) / sizeof(*forwarded_signals))

static void remove_temp_file(void)
{
    if (shared->temp_path[0])
        unlink(shared->temp_path);
    if (shared->temp_dir[0])
        zm_supervise_remove_tree(shared->temp_dir);
}

/* Ends this process as if `signal_number` had killed it (the shell sees the same status). */
static void die_by(int signal_number)
{
    signal(signal_number, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signal_number);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(signal_number);
    _exit(128 + signal_number);
}

static void print_failure(const char *reason, const char *incomplete_output)
{
    const char *head = shared->line_head[0] ? shared->line_head : "Failed to merge";
    /* "Failed to read trace: path=…, reason=…" or "Failed to place hosts: reason=…" */
    const char *joint = strchr(head, ':') ? ", " : ": ";
    if (incomplete_output && atomic_load(&shared->output_started))
        fprintf(stderr, "%s%sreason=%s; %s\n", head, joint, reason, incomplete_output);
    else
        fprintf(stderr, "%s%sreason=%s\n", head, joint, reason);
}

/* Waits for the child, feeding the watchdog; returns main's exit status. */
static int watch(pid_t child, int errors_fd, const char *incomplete_output)
{
    struct sigaction action = {.sa_handler = on_terminate}, previous[FORWARDED_COUNT];
    sigemptyset(&action.sa_mask);
    for (size_t i = 0; i < FORWARDED_COUNT; i++)
        sigaction(forwarded_signals[i], &action, &previous[i]);
    unsigned stall = stall_seconds();
    char captured[CAPTURE_SIZE];
    size_t captured_length = 0;
    uint64_t last_beat = atomic_load(&shared->heartbeat);
    double last_change = seconds_now(), last_change_cpu = cpu_seconds_of(child);
    bool stalled = false, exited = false;
    int after_eof = 0; /* polls since the pipe closed: the worker is exiting, reap it soon */
    int wait_status = 0;
    while (!exited) {
        /* The pipe's end of file says the child is exiting (no polling delay on success); the
         * timeout keeps the watchdog and the signal flag checked meanwhile. */
        struct pollfd ready = {.fd = errors_fd, .events = POLLIN};
        int timeout_ms = errors_fd >= 0 ? 250 : after_eof++ < 100 ? 1 : 20;
        if (poll(&ready, errors_fd >= 0 ? 1 : 0, timeout_ms) > 0) {
            char buffer[4096];
            ssize_t n = read(errors_fd, buffer, sizeof(buffer));
            if (n > 0) {
                size_t keep = (size_t)n;
                if (keep > sizeof(captured) - captured_length)
                    keep = sizeof(captured) - captured_length;
                memcpy(captured + captured_length, buffer, keep);
                captured_length += keep;
            } else if (n == 0 || errno != EINTR) {
                close(errors_fd);
                errors_fd = -1;
            }
        }
        if (waitpid(child, &wait_status, WNOHANG) == child) {
            exited = true;
            break;
        }
        if (terminating) {
            kill(child, SIGKILL);
            while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
                ;
            remove_temp_file();
            die_by(terminating);
        }
        /* A stall: no heartbeat while the child burned `stall` seconds of CPU (a loop), or for
         * WALL_FACTOR times as long in wall time (blocked for good). */
        uint64_t beat = atomic_load(&shared->heartbeat);
        double now = seconds_now(), cpu = cpu_seconds_of(child);
        if (beat != last_beat || atomic_load(&shared->output_waiting) ||
            !atomic_load(&shared->watching)) {
            last_beat = beat;
            last_change = now;
            last_change_cpu = cpu;
        } else if ((cpu >= 0 && last_change_cpu >= 0 && cpu - last_change_cpu > stall) ||
                   now - last_change > (double)stall * WALL_FACTOR) {
            kill(child, SIGKILL);
            while (waitpid(child, &wait_status, 0) < 0 && errno == EINTR)
                ;
            stalled = true;
            break;
        }
    }
    if (errors_fd >= 0)
        close(errors_fd);
    for (size_t i = 0; i < FORWARDED_COUNT; i++)
        sigaction(forwarded_signals[i], &previous[i], NULL);

    char reason[256];
    if (stalled) {
        remove_temp_file();
        snprintf(reason, sizeof(reason),
                 "corrupt trace: the CTF decoder made no progress for %u s of CPU time and was "
                 "stopped (ZEPROF_MERGE_STALL_SECONDS)",
                 stall);
        print_failure(reason, incomplete_output);
        return 2;
    }
    if (WIFSIGNALED(wait_status)) {
        int signal_number = WTERMSIG(wait_status);
        remove_temp_file();
        /* stdout closed early (`| head`), or Ctrl-C reaching the whole process group: end the
         * same way, quietly. */
        if (signal_number == SIGPIPE || signal_number == SIGINT || signal_number == SIGTERM ||
            signal_number == SIGHUP || terminating)
            die_by(terminating ? terminating : signal_number);
        const char *name = sigabbrev_np(signal_number);
        if (strncmp(shared->line_head, "Failed to read trace", 20) == 0)
            snprintf(reason, sizeof(reason), "corrupt trace: the CTF decoder crashed (SIG%s)",
                     name ? name : "?");
        else
            snprintf(reason, sizeof(reason), "internal error (SIG%s)", name ? name : "?");
        print_failure(reason, incomplete_output);
        return 2;
    }
    int code = WEXITSTATUS(wait_status);
    if (code == 0 || (code != 2 && captured_length > 0)) {
        /* Only what a sanitizer or a stray library message wrote; never babeltrace2's assertion
         * text of a crash, which ends above. */
        fwrite(captured, 1, captured_length, stderr);
    }
    if (code == 0)
        return 0;
    remove_temp_file();
    if (code == 2 && shared->line[0]) {
        if (incomplete_output && atomic_load(&shared->output_started))
            fprintf(stderr, "%s; %s\n", shared->line, incomplete_output);
        else
            fprintf(stderr, "%s\n", shared->line);
        return 2;
    }
    snprintf(reason, sizeof(reason), "internal error (exit status %d)", code);
    print_failure(reason, incomplete_output);
    return 2;
}

static int run_here(zm_supervised_work work, void *context)
{
    char line[LINE_SIZE] = "";
    int status = work(context, line, sizeof(line));
    if (status != 0)
        fprintf(stderr, "%s\n", line[0] ? line : "Failed to merge: reason=unknown error");
    return status;
}

int zm_supervise(zm_supervised_work work, void *context, const char *incomplete_output)
{
    const char *unsupervised = getenv("ZEPROF_MERGE_UNSUPERVISED");
    if (unsupervised && strcmp(unsupervised, "1") == 0)
        return run_here(work, context);
    shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
                  0);
    if (shared == MAP_FAILED) {
        shared = NULL;
        return run_here(work, context);
    }
    memset(shared, 0, sizeof(*shared));
    int errors[2];
    int log_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    if (log_fd < 0 || pipe2(errors, O_CLOEXEC) != 0) {
        if (log_fd >= 0)
            close(log_fd);
        return run_here(work, context);
    }
    fflush(NULL);
    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0) {
        close(errors[0]);
        close(errors[1]);
        close(log_fd);
        return run_here(work, context);
    }
    if (child == 0) {
        in_child = true;
        /* Never outlive the parent (a SIGKILLed merger must not leave a worker running). */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(2);
        dup2(errors[1], STDERR_FILENO);
        close(errors[0]);
        close(errors[1]);
        log_stream = fdopen(log_fd, "w");
        if (log_stream)
            setvbuf(log_stream, NULL, _IOLBF, 0);
        int status = work(context, shared->line, sizeof(shared->line));
        if (status == 0 && fflush(stdout) != 0) {
            snprintf(shared->line, sizeof(shared->line), "Failed to write tally: path=stdout");
            status = 2;
        }
        if (log_stream)
            fclose(log_stream);
        exit(status);
    }
    close(errors[1]);
    close(log_fd);
    return watch(child, errors[0], incomplete_output);
}
