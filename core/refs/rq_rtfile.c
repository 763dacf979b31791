/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's Documentation/technical/reftable.adoc (update transactions) */
/*
 * rq_rtfile: the lock files, tables and lists a reftable transaction or
 * compaction writes (see rq_rtfile.h).
 */
#include "rq_rtfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rq_clock.h"
#include "rq_fs.h"
#include "rq_rtlock.h"
#include "rq_testhook.h"

void rq_rtfile_new_token(char out[9])
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (uint32_t)time(NULL) ^ (uint32_t)getpid() << 16 ^ (uint32_t)clock();
	snprintf(out, 9, "%08x", r);
}

int rq_rtfile_path(const rq_rtstack *st, const char *name, const char *suffix, char *out,
		   rq_error *err)
{
	int n = snprintf(out, PATH_MAX, "%s/%s%s", rq_rtstack_dir(st), name, suffix);

	return n < 0 || n >= PATH_MAX ? rq_error_set(err, RQ_E_IO, "reftable path too long") : 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Create the lock file path holding tx's token (rq_rtlock), waiting up to
 * timeout_ms while another process holds it: its fd, or -1 with err set. */
int rq_rtfile_lock(const rq_rttx *tx, const char *path, long timeout_ms, rq_error *err)
{
	long long deadline = rq_clock_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	long delay = 1;
	const rq_rttx_opts *o = &tx->o;
	int fd;

	if (o->note_lock && o->note_lock(o->note_arg, path) != 0)
		return rq_error_set(err, RQ_E_IO, "cannot note the lock '%s'", path);
	while ((fd = rq_rtlock_create(path, tx->token)) < 0) {
		if (errno != EEXIST)
			return rq_error_set(err, RQ_E_IO, "cannot create '%s': %s", path,
					    strerror(errno));
		if (rq_clock_mono_ms() >= deadline)
			return rq_error_set(err, RQ_E_REF_LOCKED,
					    "cannot lock the refs: '%s' exists: another process is "
					    "updating them",
					    path);
		sleep_ms(delay);
		delay = delay < 32 ? delay * 2 : delay;
	}
	return fd;
}

/*
 * Write a new table named after min, max and token: to a temporary file,
 * fsynced, then renamed. name gets its file name. 0, or -1 with err set.
 */
int rq_rtfile_write_table(rq_rtstack *st, const char *token, uint64_t min, uint64_t max,
			  const rq_buf *bytes, char *name, size_t size, rq_error *err)
{
	char base[64], tmp[PATH_MAX], final[PATH_MAX], rnd[9], suffix[16];
	struct stat sb;
	int fd, ok;

	snprintf(base, sizeof(base), "0x%012llx-0x%012llx-%s", (unsigned long long)min,
		 (unsigned long long)max, token);
	snprintf(name, size, "%s.ref", base);
	rq_rtfile_new_token(rnd);
	snprintf(suffix, sizeof(suffix), ".temp.%.6s", rnd);
	if (rq_rtfile_path(st, base, suffix, tmp, err) < 0 ||
	    rq_rtfile_path(st, name, "", final, err) < 0)
		return -1;
	if (lstat(final, &sb) == 0)
		return rq_error_set(err, RQ_E_IO, "reftable '%s' exists already", name);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) < 0)
		return rq_error_set(err, RQ_E_IO, "cannot create '%s': %s", tmp, strerror(errno));
	ok = rq_fs_write_all(fd, bytes->p, bytes->len) == 0 && fsync(fd) == 0;
	ok = close(fd) == 0 && ok;
	if (!ok || rename(tmp, final) < 0) {
		int e = errno;
		unlink(tmp);
		return rq_error_set(err, RQ_E_IO, "cannot write reftable '%s': %s", name,
				    strerror(e));
	}
	return 0;
}

/* The lock gets the new list, is fsynced and renamed over tables.list
 * (hold, when not NULL: a test hook point right before the rename). */
int rq_rtfile_write_list(rq_rttx *tx, const char *const *names, size_t n, const char *hold,
			 rq_error *err)
{
	char list[PATH_MAX];
	rq_buf b = {0};
	int ok;

	for (size_t i = 0; i < n; i++) {
		rq_buf_str(&b, names[i]);
		rq_buf_add(&b, "\n", 1);
	}
	if (b.oom || rq_rtfile_path(tx->st, "tables.list", "", list, err) < 0) {
		free(b.p);
		return b.oom ? rq_error_set(err, RQ_E_NOMEM, "out of memory") : -1;
	}
	/* over the token's line (rq_rtlock), then cut to the list's length */
	ok = lseek(tx->fd, 0, SEEK_SET) == 0 &&
	     rq_fs_write_all(tx->fd, b.p ? b.p : "", b.len) == 0 &&
	     ftruncate(tx->fd, (off_t)b.len) == 0 && fsync(tx->fd) == 0;
	free(b.p);
	ok = close(tx->fd) == 0 && ok;
	tx->fd = -1;
	if (ok && hold)
		rq_testhook_hold(hold);
	if (!ok || rename(tx->lock, list) < 0) {
		int e = errno;
		unlink(tx->lock);
		return rq_error_set(err, RQ_E_IO, "cannot write '%s': %s", list, strerror(e));
	}
	return 0;
}

void rq_rtfile_unlock(rq_rttx *tx)
{
	if (tx->fd >= 0) {
		close(tx->fd);
		unlink(tx->lock);
		tx->fd = -1;
	}
}
