/*
 * l0_threads: many threads make their first Level Zero calls at the same moment, so that they race
 * the shim's lazy initialization, then keep calling. Every call must succeed and every thread must
 * see the same driver and device.
 *
 * Usage: l0_threads [THREADS] [CALLS]   (defaults 8 and 200)
 * Prints "threads=T calls=C ok" and exits 0, or names the first failure and exits 1.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <ze_api.h>

struct worker {
    pthread_t thread;
    int calls;
    int failures;
    ze_driver_handle_t driver;
    ze_device_handle_t device;
};

static pthread_barrier_t start_line;

static void *work(void *argument)
{
    struct worker *w = argument;

    pthread_barrier_wait(&start_line);
    for (int i = 0; i < w->calls; i++) {
        uint32_t count = 1;

        if (zeInit(0) != ZE_RESULT_SUCCESS || zeDriverGet(&count, &w->driver) != ZE_RESULT_SUCCESS ||
            zeDeviceGet(w->driver, &count, &w->device) != ZE_RESULT_SUCCESS)
            w->failures++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 8;
    int calls = argc > 2 ? atoi(argv[2]) : 200;
    struct worker *workers = calloc((size_t) threads, sizeof(*workers));
    int failures = 0;

    if (threads < 1 || calls < 1 || workers == NULL ||
        pthread_barrier_init(&start_line, NULL, (unsigned) threads) != 0) {
        fprintf(stderr, "usage: l0_threads [THREADS] [CALLS]\n");
        free(workers);
        return 2;
    }
    for (int t = 0; t < threads; t++) {
        workers[t].calls = calls;
        if (pthread_create(&workers[t].thread, NULL, work, &workers[t]) != 0) {
            fprintf(stderr, "l0_threads: cannot start thread %d\n", t);
            return 1;
        }
    }
    for (int t = 0; t < threads; t++) {
        pthread_join(workers[t].thread, NULL);
        failures += workers[t].failures;
        if (workers[t].driver != workers[0].driver || workers[t].device != workers[0].device) {
            fprintf(stderr, "l0_threads: thread %d sees another driver or device\n", t);
            failures++;
        }
    }
    pthread_barrier_destroy(&start_line);
    free(workers);
    if (failures != 0) {
        fprintf(stderr, "l0_threads: %d failed calls\n", failures);
        return 1;
    }
    printf("threads=%d calls=%d ok\n", threads, calls);
    return 0;
}
