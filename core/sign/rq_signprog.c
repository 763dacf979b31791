/* SPDX-License-Identifier: GPL-2.0-only */
/* follows git's gpg-interface.c (sign_buffer_gpg, sign_buffer_ssh) for the
 * arguments and the checks */
/*
 * rq_signprog: a signing program run and checked (see rq_signprog.h).
 */
#define _GNU_SOURCE /* pipe2, mkostemp */
#include "rq_signprog.h"
#include "rq_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define OUT_MAX (1024 * 1024) /* a signature is a few KiB */
#define ERR_MAX (64 * 1024)

/* A program's run: its input, what it printed, how it ended. */
typedef struct prog_run {
	const char *in;
	size_t in_len, in_done;
	int fd[3]; /* our ends: its stdin (a socket: no SIGPIPE), stdout, stderr */
	rq_buf out, err;
	int status; /* the exit status, or 128 + the signal */
} prog_run;

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* Start argv with its three standard streams ours: its pid, or -1 with
 * errno. */
static pid_t spawn(const char *const *argv, prog_run *pr)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1}, rc;
	posix_spawn_file_actions_t fa;
	pid_t pid = -1;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) < 0 ||
	    pipe2(out, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0)
		rc = errno;
	else if ((rc = posix_spawn_file_actions_init(&fa)) == 0) {
		posix_spawn_file_actions_adddup2(&fa, in[1], 0);
		posix_spawn_file_actions_adddup2(&fa, out[1], 1);
		posix_spawn_file_actions_adddup2(&fa, er[1], 2);
		rc = posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv, environ);
		posix_spawn_file_actions_destroy(&fa);
	}
	close_fd(in[1]);
	close_fd(out[1]);
	close_fd(er[1]);
	pr->fd[0] = in[0];
	pr->fd[1] = out[0];
	pr->fd[2] = er[0];
	if (rc) {
		for (int k = 0; k < 3; k++)
			close_fd(pr->fd[k]);
		errno = rc;
		return -1;
	}
	return pid;
}

/* Read what stream k (1 stdout, 2 stderr) has; at its end, close it. */
static void drain(prog_run *pr, int k)
{
	char buf[4096];
	rq_buf *b = k == 1 ? &pr->out : &pr->err;
	size_t max = k == 1 ? OUT_MAX : ERR_MAX;
	ssize_t n = read(pr->fd[k], buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(pr->fd[k]);
		pr->fd[k] = -1;
		return;
	}
	if (b->len + (size_t)n <= max) /* beyond: read and dropped */
		rq_buf_add(b, buf, (size_t)n);
}

/* Write what the program's input has left; at its end (or when the
 * program stopped reading) close it. */
static void feed(prog_run *pr)
{
	ssize_t n = 0;

	if (pr->in_done < pr->in_len)
		n = send(pr->fd[0], pr->in + pr->in_done, pr->in_len - pr->in_done,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n > 0)
		pr->in_done += (size_t)n;
	if ((n < 0 && errno != EINTR && errno != EAGAIN) || pr->in_done == pr->in_len) {
		close(pr->fd[0]);
		pr->fd[0] = -1;
	}
}

/* Input in, output out, until the program closed both of its outputs. */
static void exchange(prog_run *pr)
{
	while (pr->fd[0] >= 0 || pr->fd[1] >= 0 || pr->fd[2] >= 0) {
		struct pollfd p[3];
		for (int k = 0; k < 3; k++) {
			p[k].fd = pr->fd[k]; /* a closed one (-1) is left out */
			p[k].events = k ? POLLIN : POLLOUT;
			p[k].revents = 0;
		}
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (p[0].revents)
			feed(pr);
		for (int k = 1; k < 3; k++)
			if (p[k].revents)
				drain(pr, k);
	}
}

/* Run argv with input in: 0 with *pr filled (free its buffers), or -1
 * with RQ_E_SIGN_FAILED when it could not start. */
static int run(const char *const *argv, const void *in, size_t len, prog_run *pr, rq_error *err)
{
	int st = 0;
	pid_t pid;

	memset(pr, 0, sizeof(*pr));
	pr->in = in;
	pr->in_len = len;
	if ((pid = spawn(argv, pr)) < 0)
		return rq_error_set(err, RQ_E_SIGN_FAILED,
				    "cannot run the signing program '%s': %s", argv[0],
				    strerror(errno));
	exchange(pr);
	for (int k = 0; k < 3; k++)
		close_fd(pr->fd[k]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	pr->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (!pr->out.oom && !pr->err.oom)
		return 0;
	free(pr->out.p);
	free(pr->err.p);
	return rq_error_set(err, RQ_E_NOMEM, "out of memory");
}

/* RQ_E_SIGN_FAILED for a program that did not sign, with what it said
 * (its last lines when it said much); frees pr's buffers. */
static int failed(const char *program, prog_run *pr, rq_error *err)
{
	const char *said = pr->err.len ? pr->err.p : "(no output)";
	size_t n = strlen(said);

	while (n && (said[n - 1] == '\n' || said[n - 1] == '\r'))
		n--;
	if (n > 300)
		said += n - 300, n = 300;
	rq_error_set(err, RQ_E_SIGN_FAILED, "'%s' failed to sign the data (exit status %d): %.*s",
		     program, pr->status, (int)n, said);
	free(pr->out.p);
	free(pr->err.p);
	return -1;
}

/* The signature appended to sig from `from` (len bytes), carriage returns
 * removed: 0, or -1 out of memory. */
static int take_signature(rq_buf *sig, const char *from, size_t len, rq_error *err)
{
	for (size_t i = 0; i < len; i++)
		if (from[i] != '\r')
			rq_buf_add(sig, from + i, 1);
	return sig->oom ? rq_error_set(err, RQ_E_NOMEM, "out of memory") : 0;
}

/* A status line starting with `what` (at the start of a line). */
static int has_status(const rq_buf *b, const char *what)
{
	size_t n = strlen(what);

	for (const char *p = b->p; p && (p = strstr(p, what)); p++)
		if (p == b->p || p[-1] == '\n')
			return n > 0;
	return 0;
}

int rq_signprog_gpg(const char *program, const char *key, const void *payload, size_t len,
		    rq_buf *sig, rq_error *err)
{
	const char *argv[] = {program, "--status-fd=2", "-bsau", key, NULL};
	prog_run pr;
	int rc;

	if (run(argv, payload, len, &pr, err) < 0)
		return -1;
	if (pr.status != 0 || !pr.out.len || !has_status(&pr.err, "[GNUPG:] SIG_CREATED "))
		return failed(program, &pr, err);
	rc = take_signature(sig, pr.out.p, pr.out.len, err);
	free(pr.out.p);
	free(pr.err.p);
	return rc;
}

/* A new temporary file (in TMPDIR, else /tmp) holding data: its path in
 * path (PATH_MAX), 0, or -1 with err set. */
static int temp_file(const char *name, const void *data, size_t len, char *path, rq_error *err)
{
	const char *dir = getenv("TMPDIR");
	const char *p = data;
	int fd, e = 0;

	snprintf(path, PATH_MAX, "%s/%s-XXXXXX", dir && *dir ? dir : "/tmp", name);
	if ((fd = mkostemp(path, O_CLOEXEC)) < 0) {
		e = errno;
		path[0] = '\0';
		return rq_error_set(err, RQ_E_SIGN_FAILED, "cannot make a temporary file: %s",
				    strerror(e));
	}
	if (rq_fs_write_all(fd, p, len) < 0)
		e = errno;
	if (close(fd) < 0 && !e)
		e = errno;
	if (e)
		return rq_error_set(err, RQ_E_SIGN_FAILED, "cannot write '%s': %s", path,
				    strerror(e));
	return 0;
}

/* The file `path` appended to sig, carriage returns removed: 0, or -1. */
static int read_signature(const char *path, rq_buf *sig, rq_error *err)
{
	char buf[4096];
	rq_buf all = {0};
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return rq_error_set(err, RQ_E_SIGN_FAILED, "cannot read the signature '%s': %s",
				    path, strerror(errno));
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0 && all.len + (size_t)n <= OUT_MAX)
			rq_buf_add(&all, buf, (size_t)n);
	close(fd);
	rc = all.oom ? rq_error_set(err, RQ_E_NOMEM, "out of memory")
		     : take_signature(sig, all.p ? all.p : "", all.len, err);
	free(all.p);
	return rc;
}

/* ssh-keygen's run on the payload in buffer (a file); key a file: 0 or -1. */
static int ssh_keygen(const char *program, const char *key, int literal, const char *buffer,
		      rq_buf *sig, rq_error *err)
{
	const char *argv[] = {program,
			      "-Y",
			      "sign",
			      "-n",
			      "git",
			      "-f",
			      key,
			      literal ? "-U" : buffer,
			      literal ? buffer : NULL,
			      NULL};
	char sig_path[PATH_MAX + 8];
	prog_run pr;
	int rc;

	if (run(argv, "", 0, &pr, err) < 0)
		return -1;
	if (pr.status != 0)
		return failed(program, &pr, err);
	free(pr.out.p);
	free(pr.err.p);
	snprintf(sig_path, sizeof(sig_path), "%s.sig", buffer);
	rc = read_signature(sig_path, sig, err);
	unlink(sig_path);
	return rc;
}

int rq_signprog_ssh(const char *program, const char *key, int literal, const void *payload,
		    size_t len, rq_buf *sig, rq_error *err)
{
	char buffer[PATH_MAX] = "", key_file[PATH_MAX] = "";
	int rc = -1;

	if (temp_file("replayq-sign-buffer", payload, len, buffer, err) == 0 &&
	    (!literal || temp_file("replayq-sign-key", key, strlen(key), key_file, err) == 0))
		rc = ssh_keygen(program, literal ? key_file : key, literal, buffer, sig, err);
	if (buffer[0])
		unlink(buffer);
	if (key_file[0])
		unlink(key_file);
	return rc;
}
