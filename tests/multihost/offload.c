/*
 * offload: a small remote offload demo. A client sends frames over TCP to a server; the server runs
 * Level Zero work on its device (a zesim_spin kernel for the requested time) and replies. A relay
 * serves each frame by dispatching it on to the next server, which gives a chain A -> B -> C.
 * Both sides mark their frames with zeprof.h, so zeprof can place the server's work inside the
 * client's dispatch windows.
 *
 *   offload server PORT                 serve one connection, then exit
 *   offload relay PORT HOST:PORT        serve one connection by forwarding to HOST:PORT
 *   offload client HOST:PORT FRAMES SPIN_NS
 *
 * Wire format (little-endian host order; both ends are this program on one architecture):
 * request {session u64, worker u32, pad u32, sequence u64, spin_ns u64}, reply {status i32}.
 */
#include <zeprof.h>

#include <level_zero/ze_api.h>

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct request {
    uint64_t session;
    uint32_t worker;
    uint32_t pad;
    uint64_t sequence;
    uint64_t spin_ns;
};

struct reply {
    int32_t status;
};

/* The device side: one immediate list and a spin kernel. */
struct device_work {
    ze_context_handle_t context;
    ze_command_list_handle_t list;
    ze_module_handle_t module;
    ze_kernel_handle_t kernel;
    ze_event_pool_handle_t pool;
    ze_event_handle_t done;
};

static int fail(const char *what, ze_result_t result)
{
    fprintf(stderr, "offload: Failed to %s: result=0x%x\n", what, (unsigned)result);
    return -1;
}

static int device_open(struct device_work *work)
{
    ze_result_t r;
    uint32_t count = 1;
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    if ((r = zeInit(0)) != ZE_RESULT_SUCCESS)
        return fail("initialise Level Zero", r);
    if ((r = zeDriverGet(&count, &driver)) != ZE_RESULT_SUCCESS || count == 0)
        return fail("get a driver", r);
    count = 1;
    if ((r = zeDeviceGet(driver, &count, &device)) != ZE_RESULT_SUCCESS || count == 0)
        return fail("get a device", r);
    ze_context_desc_t context_desc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    if ((r = zeContextCreate(driver, &context_desc, &work->context)) != ZE_RESULT_SUCCESS)
        return fail("create a context", r);
    ze_command_queue_desc_t queue_desc = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0,
                                          ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                          ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    if ((r = zeCommandListCreateImmediate(work->context, device, &queue_desc, &work->list)))
        return fail("create an immediate list", r);
    static const uint8_t binary[] = {0x7f, 'E', 'L', 'F'};
    ze_module_desc_t module_desc = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_NATIVE,
                                    sizeof(binary), binary, NULL, NULL};
    if ((r = zeModuleCreate(work->context, device, &module_desc, &work->module, NULL)))
        return fail("create a module", r);
    ze_kernel_desc_t kernel_desc = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "zesim_spin"};
    if ((r = zeKernelCreate(work->module, &kernel_desc, &work->kernel)))
        return fail("create the spin kernel", r);
    if ((r = zeKernelSetGroupSize(work->kernel, 1, 1, 1)))
        return fail("set the group size", r);
    ze_event_pool_desc_t pool_desc = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL,
                                      ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    if ((r = zeEventPoolCreate(work->context, &pool_desc, 1, &device, &work->pool)))
        return fail("create an event pool", r);
    ze_event_desc_t event_desc = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, 0, ZE_EVENT_SCOPE_FLAG_HOST,
                                  ZE_EVENT_SCOPE_FLAG_HOST};
    if ((r = zeEventCreate(work->pool, &event_desc, &work->done)))
        return fail("create an event", r);
    return 0;
}

static int device_run(struct device_work *work, uint64_t spin_ns)
{
    ze_result_t r;
    ze_group_count_t groups = {1, 1, 1};
    if ((r = zeKernelSetArgumentValue(work->kernel, 0, sizeof(spin_ns), &spin_ns)))
        return fail("set the spin time", r);
    if ((r = zeCommandListAppendLaunchKernel(work->list, work->kernel, &groups, work->done, 0,
                                             NULL)))
        return fail("launch the kernel", r);
    if ((r = zeEventHostSynchronize(work->done, UINT64_MAX)))
        return fail("wait for the kernel", r);
    if ((r = zeEventHostReset(work->done)))
        return fail("reset the event", r);
    return 0;
}

static void device_close(struct device_work *work)
{
    zeEventDestroy(work->done);
    zeEventPoolDestroy(work->pool);
    zeKernelDestroy(work->kernel);
    zeModuleDestroy(work->module);
    zeCommandListDestroy(work->list);
    zeContextDestroy(work->context);
}

static int io_all(int fd, void *buf, size_t len, int writing)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = writing ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int connect_to(const char *target)
{
    char host[256];
    const char *colon = strrchr(target, ':');
    if (!colon || (size_t)(colon - target) >= sizeof(host)) {
        fprintf(stderr, "offload: Failed to parse address: address=%s\n", target);
        return -1;
    }
    memcpy(host, target, (size_t)(colon - target));
    host[colon - target] = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0) {
        fprintf(stderr, "offload: Failed to resolve: address=%s\n", target);
        return -1;
    }
    int fd = -1;
    /* The server may still be starting: retry for a few seconds. */
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        fd = socket(res->ai_family, res->ai_socktype, 0);
        if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) < 0) {
            close(fd);
            fd = -1;
            usleep(50000);
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        fprintf(stderr, "offload: Failed to connect: address=%s\n", target);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

static int accept_one(const char *port)
{
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    int one = 1, zero = 0;
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    struct sockaddr_in6 addr = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)atoi(port)),
                                .sin6_addr = in6addr_any};
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, 1) < 0) {
        fprintf(stderr, "offload: Failed to listen: port=%s, reason=%s\n", port, strerror(errno));
        close(fd);
        return -1;
    }
    int conn = accept(fd, NULL, NULL);
    close(fd);
    if (conn >= 0)
        setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return conn;
}

static zeprof_frame frame_of(const struct request *req)
{
    zeprof_frame frame = {req->session, req->worker, req->sequence};
    return frame;
}

/* Serve frames until the client closes; `next` >= 0 forwards each frame there (relay). */
static int serve(const char *port, const char *next_target)
{
    struct device_work work;
    if (device_open(&work) < 0)
        return 1;
    int next = next_target ? connect_to(next_target) : -1;
    if (next_target && next < 0)
        return 1;
    int conn = accept_one(port);
    if (conn < 0)
        return 1;
    struct request req;
    int status = 0;
    while (io_all(conn, &req, sizeof(req), 0) == 0) {
        zeprof_frame frame = frame_of(&req);
        zeprof_serve_begin(&frame);
        struct reply rep = {0};
        if (device_run(&work, req.spin_ns) < 0)
            rep.status = -1;
        if (next >= 0) {
            /* The relay dispatches the same work one hop further, as its own worker. */
            struct request onward = req;
            onward.worker = req.worker + 1000;
            zeprof_frame onward_frame = frame_of(&onward);
            struct reply onward_rep;
            zeprof_dispatch_begin(&onward_frame);
            if (io_all(next, &onward, sizeof(onward), 1) < 0 ||
                io_all(next, &onward_rep, sizeof(onward_rep), 0) < 0)
                onward_rep.status = -1;
            zeprof_dispatch_end(&onward_frame, onward_rep.status);
            if (onward_rep.status != 0)
                rep.status = onward_rep.status;
        }
        zeprof_serve_end(&frame, rep.status);
        if (io_all(conn, &rep, sizeof(rep), 1) < 0) {
            status = 1;
            break;
        }
    }
    close(conn);
    if (next >= 0)
        close(next);
    device_close(&work);
    return status;
}

static int client(const char *target, uint64_t frames, uint64_t spin_ns)
{
    int fd = connect_to(target);
    if (fd < 0)
        return 1;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t session = ((uint64_t)getpid() << 32) ^ (uint64_t)now.tv_nsec;
    int failed = 0;
    for (uint64_t i = 0; i < frames; i++) {
        struct request req = {session, 0, 0, i, spin_ns};
        zeprof_frame frame = frame_of(&req);
        struct reply rep;
        zeprof_dispatch_begin(&frame);
        if (io_all(fd, &req, sizeof(req), 1) < 0 || io_all(fd, &rep, sizeof(rep), 0) < 0) {
            zeprof_dispatch_end(&frame, -1);
            fprintf(stderr, "offload: Failed to exchange frame: sequence=%" PRIu64 "\n", i);
            failed = 1;
            break;
        }
        zeprof_dispatch_end(&frame, rep.status);
        if (rep.status != 0)
            failed = 1;
        /* Some client-side work between frames, so peers are idle there too. */
        usleep(1000);
    }
    close(fd);
    printf("offload: %" PRIu64 " frames %s\n", frames, failed ? "FAILED" : "ok");
    return failed;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "server") == 0)
        return serve(argv[2], NULL);
    if (argc == 4 && strcmp(argv[1], "relay") == 0)
        return serve(argv[2], argv[3]);
    if (argc == 5 && strcmp(argv[1], "client") == 0)
        return client(argv[2], strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10));
    fprintf(stderr, "usage: offload server PORT | relay PORT HOST:PORT | "
                    "client HOST:PORT FRAMES SPIN_NS\n");
    return 2;
}
