/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_fs_map_regular: a whole regular file mapped; what is not one (missing,
 * empty, too large, a FIFO, a symbolic link when links are not followed)
 * refused with its errno, nothing left mapped or open.
 */
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rq_fs.h"

static char g_dir[PATH_MAX];

static const char *at(const char *name)
{
	static char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", g_dir, name);
	return path;
}

static void put(const char *name, const char *content)
{
	FILE *f = fopen(at(name), "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

/* -1 and the errno rq_fs_map_regular gives name, 0 when it maps it. */
static int map_errno(const char *name, int follow, size_t max)
{
	const unsigned char *p = NULL;
	size_t len = 0;

	if (rq_fs_map_regular(at(name), follow, max, &p, &len) == 0) {
		munmap((void *)p, len);
		return 0;
	}
	return errno;
}

static void test_map(void **state)
{
	const unsigned char *p;
	size_t len;

	(void)state;
	snprintf(g_dir, sizeof(g_dir), "%s/fs", tu_scratch());
	tu_rmrf(g_dir);
	assert_int_equal(mkdir(g_dir, 0755), 0);
	put("file", "twelve bytes");
	put("empty", "");
	assert_int_equal(symlink("file", at("link")), 0);
	assert_int_equal(mkfifo(at("fifo"), 0644), 0);

	assert_int_equal(rq_fs_map_regular(at("file"), 0, 100, &p, &len), 0);
	assert_int_equal(len, 12);
	assert_memory_equal(p, "twelve bytes", 12);
	munmap((void *)p, len);
	assert_int_equal(map_errno("link", 1, 100), 0);
	assert_int_equal(map_errno("link", 0, 100), ELOOP);
	assert_int_equal(map_errno("missing", 1, 100), ENOENT);
	assert_int_equal(map_errno("empty", 1, 100), EINVAL);
	assert_int_equal(map_errno("file", 1, 11), EFBIG);
	assert_int_equal(map_errno("fifo", 1, 100), RQ_FS_ENOTREG);
	assert_int_equal(map_errno(".", 1, 100), RQ_FS_ENOTREG);
	tu_rmrf(g_dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_map),
	};
	return cmocka_run_group_tests(tests, tu_group_setup, tu_group_teardown);
}
