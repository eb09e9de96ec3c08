/* io: whole reads and writes, a small file, integers from bytes (io.h). */
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t zm_io_load(const unsigned char *p, size_t bytes, bool big)
{
    uint64_t value = 0;
    for (size_t i = 0; i < bytes; i++)
        value = value << 8 | p[big ? i : bytes - 1 - i];
    return value;
}

int zm_io_read_at(int fd, void *buffer, size_t size, uint64_t offset)
{
    size_t done = 0;
    while (done < size) {
        ssize_t n = pread(fd, (char *)buffer + done, size - done, (off_t)(offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    return 0;
}

int zm_io_write_all(int fd, const void *buffer, size_t size)
{
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, (const char *)buffer + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    return 0;
}

unsigned char *zm_io_read_file(const char *path, size_t limit, size_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return NULL;
    struct stat info;
    unsigned char *data = NULL;
    if (fstat(fd, &info) != 0)
        goto end;
    if (!S_ISREG(info.st_mode)) {
        errno = EINVAL;
        goto end;
    }
    if ((uint64_t)info.st_size > limit) {
        errno = EFBIG;
        goto end;
    }
    data = malloc((size_t)info.st_size + 1);
    if (!data)
        goto end;
    size_t done = 0;
    while (done < (size_t)info.st_size) {
        ssize_t n = read(fd, data + done, (size_t)info.st_size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    data[done] = '\0';
    *size = done;
end:
    close(fd);
    return data;
}
