/*
 * io: the few file and byte helpers the trace-reading modules share (validate, split_plan,
 * split): whole reads and writes that resume after EINTR and short counts, a whole small file,
 * and integers of either byte order from bytes.
 */
#ifndef ZM_IO_H
#define ZM_IO_H

#include "must_check.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The `bytes`-byte (at most 8) unsigned integer at `p`, big-endian when `big`. */
uint64_t zm_io_load(const unsigned char *p, size_t bytes, bool big);
/* `size` bytes at `offset` of `fd` into `buffer`: 0, or -1 (error or end of file first). */
ZM_MUST_CHECK int zm_io_read_at(int fd, void *buffer, size_t size, uint64_t offset);
/* All of `buffer` to `fd`: 0, or -1 with errno set. */
ZM_MUST_CHECK int zm_io_write_all(int fd, const void *buffer, size_t size);
/* What the regular file `path` holds (at most `limit` bytes), NUL-terminated, its size in
 * `*size`; NULL with errno set: EINVAL when not a regular file, EFBIG when larger. Opened without
 * blocking: a FIFO in its place does not hang. The caller frees it. */
ZM_MUST_CHECK unsigned char *zm_io_read_file(const char *path, size_t limit, size_t *size);

#endif
