/*
 * rq_objdir: temporary object directory and the single packfile at the
 * end of a replay.
 */
#include "rq_objdir.h"

#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TMP_PREFIX "replayq-tmp-"
#define DIR_MAX	   3800 /* leaves room for file names below PATH_MAX */

struct rq_objdir {
	git_repository *repo;
	git_odb *orig_odb;	      /* the repository's own database, restored at the end */
	git_odb *odb;		      /* ours: repository + temporary directory */
	git_odb_backend *tmp_backend; /* owned by odb */
	char objects[DIR_MAX];
	char path[DIR_MAX];
	int finished;
};

int rq_rmtree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	if (!(d = opendir(path)))
		return -1;
	while ((e = readdir(d))) {
		char child[PATH_MAX];
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(child, sizeof(child), "%s/%s", path, e->d_name) >=
		    (int)sizeof(child)) {
			rc = -1;
			continue;
		}
		if (rq_rmtree(child) < 0)
			rc = -1;
	}
	closedir(d);
	if (rmdir(path) < 0)
		rc = -1;
	return rc;
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

/* This machine's name, made safe for a file name. */
static void this_host(char *out, size_t size)
{
	char h[256] = "";
	size_t j = 0;

	gethostname(h, sizeof(h) - 1);
	for (size_t i = 0; h[i] && j + 1 < size && j < 64; i++)
		if (isalnum((unsigned char)h[i]) || h[i] == '.' || h[i] == '_')
			out[j++] = h[i];
	if (!j)
		out[j++] = 'h';
	out[j] = '\0';
}

int rq_objdir_open(rq_objdir **out, git_repository *repo, rq_error *err)
{
	rq_objdir *od = calloc(1, sizeof(*od));
	int n;

	*out = NULL;
	if (!od)
		return rq_error_set(err, RQ_E_NOMEM, "out of memory");
	od->repo = repo;
	if (objects_dir(repo, od->objects, sizeof(od->objects), err) < 0)
		goto fail;
	{
		char host[80];
		this_host(host, sizeof(host));
		n = snprintf(od->path, sizeof(od->path), "%s/" TMP_PREFIX "%ld@%s-XXXXXX",
			     od->objects, (long)getpid(), host);
	}
	if (n < 0 || (size_t)n >= sizeof(od->path)) {
		rq_error_set(err, RQ_E_IO, "objects directory path too long");
		goto fail;
	}
	if (!mkdtemp(od->path)) {
		rq_error_set(err, RQ_E_IO, "cannot create a temporary object directory in %s: %s",
			     od->objects, strerror(errno));
		od->path[0] = '\0';
		goto fail;
	}
	if (git_repository_odb(&od->orig_odb, repo) < 0) {
		rq_error_git(err, "cannot open the object database");
		goto fail;
	}
	if (git_odb_open(&od->odb, od->objects) < 0) {
		rq_error_git(err, "cannot open the object database");
		goto fail;
	}
	if (git_odb_backend_loose(&od->tmp_backend, od->path, -1, 0, 0, 0) < 0) {
		rq_error_git(err, "cannot open the temporary object directory");
		goto fail;
	}
	/* above the packs (2) and loose objects (1): it takes every write */
	if (git_odb_add_backend(od->odb, od->tmp_backend, 10) < 0) {
		od->tmp_backend->free(od->tmp_backend);
		od->tmp_backend = NULL;
		rq_error_git(err, "cannot add the temporary object directory");
		goto fail;
	}
	git_repository_set_odb(repo, od->odb);
	*out = od;
	return 0;
fail:
	rq_objdir_free(od);
	return -1;
}

const char *rq_objdir_path(const rq_objdir *od)
{
	return od->path;
}

static void restore_odb(rq_objdir *od)
{
	if (od->orig_odb) {
		git_repository_set_odb(od->repo, od->orig_odb);
		git_odb_free(od->orig_odb);
		od->orig_odb = NULL;
	}
	if (od->odb) {
		git_odb_free(od->odb);
		od->odb = NULL;
		od->tmp_backend = NULL;
	}
}

typedef struct oidlist {
	git_oid *v;
	size_t n, cap;
} oidlist;

static int collect_cb(const git_oid *id, void *payload)
{
	oidlist *l = payload;
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 256;
		git_oid *nv = realloc(l->v, ncap * sizeof(*nv));
		if (!nv)
			return -1;
		l->v = nv;
		l->cap = ncap;
	}
	git_oid_cpy(&l->v[l->n++], id);
	return 0;
}

int rq_objdir_finish(rq_objdir *od, rq_objdir_stats *stats, rq_error *err)
{
	oidlist l = {0};
	git_packbuilder *pb = NULL;
	char packdir[DIR_MAX + 8], src[PATH_MAX], dst[PATH_MAX];
	const char *name;
	struct stat st;
	int rc = -1;

	memset(stats, 0, sizeof(*stats));
	if (od->tmp_backend->foreach (od->tmp_backend, collect_cb, &l) < 0) {
		rq_error_set(err, RQ_E_IO, "cannot list the new objects");
		goto out;
	}
	stats->objects = l.n;
	if (l.n == 0) {
		rc = 0;
		goto out;
	}
	if (git_packbuilder_new(&pb, od->repo) < 0) {
		rq_error_git(err, "cannot start a pack");
		goto out;
	}
	git_packbuilder_set_threads(pb, 1);
	for (size_t i = 0; i < l.n; i++) {
		if (git_packbuilder_insert(pb, &l.v[i], NULL) < 0) {
			rq_error_git(err, "cannot add an object to the pack");
			goto out;
		}
	}
	snprintf(packdir, sizeof(packdir), "%s/pack", od->path);
	if (mkdir(packdir, 0755) < 0 && errno != EEXIST) {
		rq_error_set(err, RQ_E_IO, "cannot create %s: %s", packdir, strerror(errno));
		goto out;
	}
	if (git_packbuilder_write(pb, packdir, 0444, NULL, NULL) < 0) {
		rq_error_git(err, "cannot write the pack");
		goto out;
	}
	name = git_packbuilder_name(pb);
	snprintf(stats->pack_name, sizeof(stats->pack_name), "pack-%s", name);
	snprintf(dst, sizeof(dst), "%s/pack", od->objects);
	if (mkdir(dst, 0755) < 0 && errno != EEXIST) {
		rq_error_set(err, RQ_E_IO, "cannot create %s: %s", dst, strerror(errno));
		goto out;
	}
	/* the pack first, its index last: readers only see complete packs */
	static const char *const exts[] = {".pack", ".idx"};
	for (int i = 0; i < 2; i++) {
		snprintf(src, sizeof(src), "%s/pack-%s%s", packdir, name, exts[i]);
		snprintf(dst, sizeof(dst), "%s/pack/pack-%s%s", od->objects, name, exts[i]);
		if (i == 0 && stat(src, &st) == 0)
			stats->pack_bytes = (uint64_t)st.st_size;
		if (rename(src, dst) < 0) {
			rq_error_set(err, RQ_E_IO, "cannot move %s into place: %s", src,
				     strerror(errno));
			if (i == 1) {
				/* leave no pack without its index */
				snprintf(dst, sizeof(dst), "%s/pack/pack-%s.pack", od->objects,
					 name);
				unlink(dst);
			}
			goto out;
		}
	}
	rc = 0;
out:
	git_packbuilder_free(pb);
	free(l.v);
	if (rc == 0) {
		od->finished = 1;
		restore_odb(od);
		rq_rmtree(od->path);
		od->path[0] = '\0';
	}
	return rc;
}

void rq_objdir_free(rq_objdir *od)
{
	if (!od)
		return;
	restore_odb(od);
	if (od->path[0])
		rq_rmtree(od->path);
	free(od);
}

/*
 * Is the temporary directory `name` (in an objects directory) stale? Made
 * on this machine by a process that is gone: yes, whatever its age. Made
 * elsewhere (shared storage) or named the old way: when older than max_age
 * and its owner is not alive here.
 */
static int is_stale(const char *name, const struct stat *st, unsigned max_age, time_t now)
{
	char host[80], *end;
	const char *at;
	long pid = strtol(name + strlen(TMP_PREFIX), &end, 10);
	int alive =
	    pid > 0 && (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno == EPERM);

	this_host(host, sizeof(host));
	at = *end == '@' ? end + 1 : NULL;
	if (at && !strncmp(at, host, strlen(host)) && at[strlen(host)] == '-')
		return !alive;
	return now - st->st_mtime >= (time_t)max_age && !alive;
}

int rq_objdir_clean_stale_dir(const char *objects, unsigned max_age)
{
	DIR *d;
	struct dirent *e;
	int removed = 0;
	time_t now = time(NULL);

	if (!(d = opendir(objects)))
		return 0;
	while ((e = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;
		if (strncmp(e->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) != 0)
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", objects, e->d_name) >= (int)sizeof(path))
			continue;
		if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (is_stale(e->d_name, &st, max_age, now) && rq_rmtree(path) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}

int rq_objdir_clean_stale(git_repository *repo, unsigned max_age, rq_error *err)
{
	char objects[DIR_MAX];

	if (objects_dir(repo, objects, sizeof(objects), err) < 0)
		return -1;
	return rq_objdir_clean_stale_dir(objects, max_age);
}
