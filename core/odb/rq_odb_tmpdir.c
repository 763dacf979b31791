/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_odb_tmpdir: a replay's temporary object directory (see the header):
 * made and set up, part files in and out, the one pack at the end, and
 * the clean-up of directories left by killed processes.
 */
#include "rq_odb_tmpdir.h"
#include "rq_clock.h"
#include "rq_fs.h"
#include "rq_mem.h"
#include "rq_odb_mem.h"
#include "rq_odb_packwrite.h"
#include "rq_odb_part.h"
#include "rq_odb_own.h"
#include "rq_testhook.h"
#include "rq_trace.h"

#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TMP_PREFIX RQ_ODB_OWN_TMP
#define DIR_MAX	   3800 /* leaves room for file names below PATH_MAX */

struct rq_odb_tmpdir {
	git_repository *repo;
	git_odb *orig_odb;    /* the repository's own database, restored at the end */
	git_odb *odb;	      /* ours: repository + temporary directory */
	git_odb_backend *mem; /* the new objects; owned by odb */
	rq_odb_pack_encoder *enc;
	const rq_oid_algo *algo; /* the database's object format */
	char objects[DIR_MAX];
	char path[DIR_MAX]; /* objects/<its owner marker's name less .owner>; "" before */
	rq_owner owner;	    /* the marker this process holds while it has files here */
	int made;	    /* path is a directory (made by rq_odb_tmpdir_make) */
	int keep, kept;	    /* keep the pack (opts' keep_pack); a .keep made */
	time_t touched;	    /* monotonic seconds of the directory's last touch */
};

static time_t mono_seconds(void)
{
	return (time_t)(rq_clock_mono_ms() / 1000);
}

void rq_odb_tmpdir_keepalive(rq_odb_tmpdir *od, unsigned every)
{
	time_t now = mono_seconds();

	if (!od || !od->made || now - od->touched < (time_t)every)
		return;
	/* its modification time is what another machine's clean-up looks at */
	(void)utimensat(AT_FDCWD, od->path, NULL, AT_SYMLINK_NOFOLLOW);
	od->touched = now;
}

static int objects_dir(git_repository *repo, char *out, size_t size, rq_error *err)
{
	git_buf b = {0};
	int n;

	if (git_repository_item_path(&b, repo, GIT_REPOSITORY_ITEM_OBJECTS) < 0)
		return rq_error_git(err, "cannot find the objects directory");
	n = snprintf(out, size, "%s", b.ptr);
	git_buf_dispose(&b);
	if (n < 0 || (size_t)n >= size)
		return rq_error_set(err, RQ_E_IO, "objects directory path too long");
	/* drop a trailing slash */
	if (n > 1 && out[n - 1] == '/')
		out[n - 1] = '\0';
	return 0;
}

/*
 * At open, before any file in the objects directory: the owner marker
 * <objects>/replayq-tmp-<pid>@<host>.<token>.owner, flocked while this
 * process (and the children it forks) live (rq_odb_own_tmp_begin), and
 * the names of what it stands for: the directory
 * <objects>/replayq-tmp-<...>.<token> and the temporary pack files
 * tmp_replayq-tmp-<...>.<token>-pack_XXXXXX.
 */
static int own(rq_odb_tmpdir *od, rq_error *err)
{
	char base[NAME_MAX + 1];

	if (od->owner.fd >= 0)
		return 0;
	if (rq_odb_own_tmp_begin(&od->owner, od->objects, base, sizeof(base), err) < 0)
		return -1;
	if (snprintf(od->path, sizeof(od->path), "%s/%s", od->objects, base) >=
	    (int)sizeof(od->path)) {
		rq_odb_own_tmp_end(&od->owner);
		return rq_error_set(err, RQ_E_IO, "objects directory path too long");
	}
	return 0;
}

int rq_odb_tmpdir_make(rq_odb_tmpdir *od, rq_error *err)
{
	/* a parallel replay's: its processes' compressors share the CPUs with
	 * every worker's picks, so they do not poll */
	rq_odb_mem_no_poll(od->mem);
	if (od->made)
		return 0;
	if (mkdir(od->path, 0700) < 0)
		return rq_error_set(err, RQ_E_IO,
				    "cannot create a temporary object directory in %s: %s",
				    od->objects, strerror(errno));
	od->made = 1;
	od->touched = mono_seconds();
	return 0;
}

int rq_odb_tmpdir_open(rq_odb_tmpdir **out, git_repository *repo, const rq_odb_opts *opts,
		       rq_error *err)
{
	rq_odb_tmpdir *od = calloc(1, sizeof(*od));

	*out = NULL;
	if (!od)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	od->repo = repo;
	od->owner.fd = -1;
	od->keep = opts && opts->keep_pack;
	if (objects_dir(repo, od->objects, sizeof(od->objects), err) < 0 || own(od, err) < 0)
		goto fail;
	if (git_repository_odb(&od->orig_odb, repo) < 0) {
		rq_error_git(err, "cannot open the object database");
		goto fail;
	}
	if (rq_odb_new(&od->odb, repo, opts, err) < 0)
		goto fail;
	rq_odb_share_packs(od->odb, od->orig_odb);
	od->algo = rq_odb_algo(od->odb);
	if (!(od->enc = rq_odb_pack_encoder_new_level(rq_odb_pack_compression_level(repo))) ||
	    rq_odb_mem_new_at(&od->mem, od->algo) < 0) {
		rq_error_set(err, RQ_E_NOMEM, "out of memory");
		goto fail;
	}
	rq_odb_pack_encoder_set_algo(od->enc, od->algo);
	/* above the packs (2) and loose objects (1): it takes every write */
	if (git_odb_add_backend(od->odb, od->mem, 10) < 0) {
		od->mem->free(od->mem);
		od->mem = NULL;
		rq_error_git(err, "cannot add the object store of the replay");
		goto fail;
	}
	/* the new objects are compressed on the second core as they come */
	rq_odb_mem_compress_ahead(od->mem, od->enc);
	git_repository_set_odb(repo, od->odb);
	*out = od;
	return 0;
fail:
	rq_odb_tmpdir_free(od);
	return -1;
}

const char *rq_odb_tmpdir_path(const rq_odb_tmpdir *od)
{
	return od->path;
}

static void restore_odb(rq_odb_tmpdir *od)
{
	if (od->orig_odb) {
		git_repository_set_odb(od->repo, od->orig_odb);
		git_odb_free(od->orig_odb);
		od->orig_odb = NULL;
	}
	if (od->odb) {
		git_odb_free(od->odb);
		od->odb = NULL;
		od->mem = NULL;
	}
}

size_t rq_odb_tmpdir_mark(const rq_odb_tmpdir *od)
{
	return rq_odb_mem_count(od->mem);
}

static int part_path(const rq_odb_tmpdir *od, unsigned idx, const char *suffix, char *out,
		     size_t size)
{
	int n = snprintf(out, size, "%s/part-%u%s", od->path, idx, suffix);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* What rq_odb_mem_encode or _check_deltas returned, as an error. */
static int encode_error(int r, rq_error *err)
{
	if (r == -2) /* libgit2's message is the thread's */
		return rq_error_set(err, RQ_E_GIT, "a new object: SHA1 collision attack detected");
	if (r < 0)
		return rq_error_set(err, RQ_E_NOMEM, "cannot compress the new objects");
	return 0;
}

int rq_odb_tmpdir_encode(rq_odb_tmpdir *od, size_t since, rq_error *err)
{
	return encode_error(rq_odb_mem_encode(od->mem, od->enc, since), err);
}

int rq_odb_tmpdir_save_part(rq_odb_tmpdir *od, size_t since, unsigned idx, rq_error *err)
{
	char tmp[PATH_MAX], final[PATH_MAX];

	if (!od->made)
		return rq_error_set(err, RQ_E_INTERNAL, "no temporary object directory for parts");
	if (part_path(od, idx, ".tmp", tmp, sizeof(tmp)) < 0 ||
	    part_path(od, idx, "", final, sizeof(final)) < 0)
		return rq_error_set(err, RQ_E_IO, "objects directory path too long");
	/* compressed here, in parallel with the other workers */
	if (rq_odb_tmpdir_encode(od, since, err) < 0)
		return -1;
	if (rq_odb_part_save(od->mem, since, tmp, err) < 0)
		return -1;
	if (rename(tmp, final) < 0) {
		unlink(tmp);
		return rq_error_set(err, RQ_E_IO, "cannot move %s into place: %s", tmp,
				    strerror(errno));
	}
	return 0;
}

int rq_odb_tmpdir_load_part(rq_odb_tmpdir *od, unsigned idx, rq_error *err)
{
	char path[PATH_MAX];
	int rc;

	if (part_path(od, idx, "", path, sizeof(path)) < 0)
		return rq_error_set(err, RQ_E_IO, "objects directory path too long");
	rc = rq_odb_part_load(od->mem, path, err);
	unlink(path);
	return rc;
}

/* Every new object as a pack entry: *entries (malloc'ed, pointing into
 * the store) in write order, so that a delta's base comes before it. */
static int pack_entries(rq_odb_tmpdir *od, size_t *n, rq_odb_pack_entry **entries, rq_error *err)
{
	rq_odb_pack_entry *e;
	size_t k = 0;
	int r;

	*entries = NULL;
	r = rq_odb_mem_encode(od->mem, od->enc, 0);
	if (r == 0)
		r = rq_odb_mem_check_deltas(od->mem, od->enc);
	if (r < 0)
		return encode_error(r, err);
	if (!(e = malloc((*n ? *n : 1) * sizeof(*e))))
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	for (size_t i = 0; i < *n; i++) {
		r = rq_odb_mem_entry(od->mem, i, &e[k]);
		if (r < 0) {
			free(e);
			return rq_error_set(err, RQ_E_INTERNAL, "an object was not encoded");
		}
		k += r == 0; /* 1: a borrowed delta base no delta uses, left out */
	}
	*n = k;
	*entries = e;
	return 0;
}

static int make_dir(const char *path, rq_error *err)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return rq_error_set(err, RQ_E_IO, "cannot create %s: %s", path, strerror(errno));
	return 0;
}

/* Before the pack moves in: kept and marked as replayq's.
 * Test hold point "pack-kept": both made, the pack not moved in. */
static int before_move(void *ctx, const char *name, rq_error *err)
{
	rq_odb_tmpdir *od = ctx;
	/* kept while it moves in, whatever the options (a consolidation must
	 * not take a pack whose index is not in yet) */
	int r = rq_odb_own_keep(od->objects, name);

	if (r < 0)
		return rq_error_set(err, RQ_E_IO, "cannot keep %s/pack/%s: %s", od->objects, name,
				    strerror(errno));
	od->kept = r == 0; /* 1: a .keep was there (not ours) */
	/* unmarked (out of room), the pack is never consolidated: no harm */
	(void)rq_odb_own_mark(od->objects, name);
	rq_testhook_hold("pack-kept");
	return 0;
}

static int after_fail(void *ctx, const char *name, rq_error *err)
{
	rq_odb_tmpdir *od = ctx;

	(void)err;
	if (od->kept)
		rq_odb_own_unkeep(od->objects, name);
	od->kept = 0;
	return 0;
}

/*
 * The new objects as one pack, written straight into objects/pack under
 * temporary names (tmp_replayq-tmp-<pid>@<host>.<token>-pack_XXXXXX: the
 * clean-up below knows their owner, and git's prune removes tmp_ files
 * too), then renamed, the pack before its index. No directory is made for
 * it: on ext4 a mkdir and an rmdir cost more than writing a small pack.
 */
static int write_pack(rq_odb_tmpdir *od, rq_odb_tmpdir_stats *stats, rq_error *err)
{
	rq_odb_pack_entry *e;
	char packdir[DIR_MAX + 8], prefix[200];
	int rc = -1;

	if (pack_entries(od, &stats->objects, &e, err) < 0)
		return -1;
	if (!stats->objects) { /* nothing left to pack */
		free(e);
		return 0;
	}
	RQ_TRACE_AT("pack: entries");
	snprintf(packdir, sizeof(packdir), "%s/pack", od->objects);
	snprintf(prefix, sizeof(prefix), "tmp_%.180s-", strrchr(od->path, '/') + 1);
	if (make_dir(packdir, err) == 0 &&
	    rq_odb_packwrite_hooked(packdir, prefix, od->algo, e, stats->objects, before_move,
				    after_fail, od, stats->pack_name, &stats->pack_bytes, err) == 0)
		rc = 0;
	if (rc == 0 && od->kept && !od->keep) { /* nothing to wait for */
		rq_odb_own_unkeep(od->objects, stats->pack_name);
		od->kept = 0;
	}
	stats->kept = od->kept;
	RQ_TRACE_AT("pack: written");
	free(e);
	return rc;
}

int rq_odb_tmpdir_finish(rq_odb_tmpdir *od, rq_odb_tmpdir_stats *stats, rq_error *err)
{
	/* a long replay's pack takes a while */
	rq_odb_tmpdir_keepalive(od, RQ_ODB_TMPDIR_KEEPALIVE_SECONDS);
	memset(stats, 0, sizeof(*stats));
	stats->objects = rq_odb_mem_count(od->mem);
	if (stats->objects && write_pack(od, stats, err) < 0) {
		stats->pack_name[0] = '\0';
		stats->pack_bytes = 0;
		return -1;
	}
	restore_odb(od);
	if (od->made)
		rq_fs_rmtree(od->path);
	od->made = 0;
	rq_odb_own_tmp_end(&od->owner);
	return 0;
}

void rq_odb_tmpdir_free(rq_odb_tmpdir *od)
{
	if (!od)
		return;
	restore_odb(od);
	if (od->made)
		rq_fs_rmtree(od->path);
	rq_odb_own_tmp_end(&od->owner);
	rq_odb_pack_encoder_free(od->enc);
	free(od);
}

/* Remove the stale entries of the directory dir (a descriptor, taken)
 * whose names start with prefix and then TMP_PREFIX: directories, or
 * regular files, none followed if it is a symbolic link
 * (rq_odb_own_tmp_stale: by their owner marker's flock). The number
 * removed. */
static int clean_in(int objects, int dir, const char *prefix, int dirs, unsigned max_age)
{
	size_t skip = strlen(prefix);
	struct dirent *e;
	int removed = 0;
	DIR *d = dir >= 0 ? fdopendir(dir) : NULL;

	if (!d) {
		if (dir >= 0)
			close(dir);
		return 0;
	}
	rewinddir(d); /* an offset shared with objects */
	while ((e = readdir(d))) {
		struct stat st;
		if (strncmp(e->d_name, prefix, skip) != 0 ||
		    strncmp(e->d_name + skip, TMP_PREFIX, strlen(TMP_PREFIX)) != 0 ||
		    rq_owner_is_marker(e->d_name))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    (dirs ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)))
			continue;
		if (!rq_odb_own_tmp_stale(objects, e->d_name + skip, !dirs, (long)st.st_mtime,
					  max_age))
			continue;
		if ((dirs ? rq_fs_rmtree_at(dirfd(d), e->d_name)
			  : unlinkat(dirfd(d), e->d_name, 0)) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}

/* The stale .keep files of ours in a pack directory (a descriptor, taken)
 * and the packs they held without an index. */
static int clean_keeps(int pack)
{
	struct dirent *e;
	char **keeps = NULL;
	size_t n = 0, cap = 0, removed = 0;
	DIR *d = pack >= 0 ? fdopendir(pack) : NULL;

	if (!d) {
		if (pack >= 0)
			close(pack);
		return 0;
	}
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		char **v;
		if (l < 10 || strcmp(e->d_name + l - 5, ".keep") ||
		    !(v = rq_mem_grow(keeps, &cap, n + 1, sizeof(*v), 8)))
			continue;
		keeps = v;
		if ((keeps[n] = strdup(e->d_name)))
			n++;
	}
	removed = rq_odb_own_sweep(-1, dirfd(d), NULL, 0, keeps, n);
	closedir(d);
	for (size_t i = 0; i < n; i++)
		free(keeps[i]);
	free(keeps);
	return (int)removed;
}

/* objects/pack of the objects directory objects, not followed if it is a
 * symbolic link (a descriptor, or -1). */
static int open_pack_dir(int objects)
{
	return openat(objects, "pack", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int rq_odb_tmpdir_clean_stale_at(int objects, unsigned max_age)
{
	/* first what gone owners' markers stand for; then what has no marker */
	int removed = rq_odb_own_tmp_clean_gone(objects);

	removed += clean_in(objects, fcntl(objects, F_DUPFD_CLOEXEC, 0), "", 1, max_age);
	/* a pack being written when its process was killed, and the .keep
	 * files of killed replays */
	removed += clean_in(objects, open_pack_dir(objects), "tmp_", 0, max_age);
	return removed + clean_keeps(open_pack_dir(objects));
}

int rq_odb_tmpdir_clean_stale_dir(const char *objects, unsigned max_age)
{
	int fd = rq_fs_opendir(objects), removed;

	if (fd < 0)
		return 0;
	removed = rq_odb_tmpdir_clean_stale_at(fd, max_age);
	close(fd);
	return removed;
}

void rq_odb_tmpdir_release(git_repository *repo, const char *name)
{
	char objects[DIR_MAX];

	if (repo && name && name[0] && objects_dir(repo, objects, sizeof(objects), NULL) == 0)
		rq_odb_own_unkeep(objects, name);
}

int rq_odb_tmpdir_clean_stale(git_repository *repo, unsigned max_age, rq_error *err)
{
	char objects[DIR_MAX];
	int fd, removed;

	if (objects_dir(repo, objects, sizeof(objects), err) < 0)
		return -1;
	if ((fd = rq_fs_opendir(objects)) < 0)
		return 0;
	/* gone owners' markers with all they stand for; the other temporary
	 * files of the pack directory go with the replay's listing of its
	 * packs (rq_odb_packset) */
	removed = rq_odb_own_tmp_clean_gone(fd);
	removed += clean_in(fd, fcntl(fd, F_DUPFD_CLOEXEC, 0), "", 1, max_age);
	close(fd);
	return removed;
}
