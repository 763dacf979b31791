/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rq_git2_nonet: libgit2 without its network transports, for the static
 * link (CMake option RQ_STATIC_LIBGIT2).
 *
 * replayq only reads and writes local repositories. The libgit2 of Debian
 * 12 (1.5) sets up its TLS (mbedtls: the whole system CA bundle is parsed),
 * SSH (libssh2, which initialises OpenSSL) and GSSAPI support in
 * git_libgit2_init(): 7 ms of every replayq command, plus the loading of
 * those libraries. Linked statically, these definitions take the place of
 * libgit2's own for those three parts, so that neither they nor their
 * libraries are linked in: an https:// or ssh:// remote gets an error
 * instead. The signatures are libgit2 1.5's; CMake uses this file only with
 * that version, after a test link.
 */
#include <git2.h>
#include <git2/sys/transport.h>
#include <stddef.h>
#include <stdlib.h>

int git_mbedtls_stream_global_init(void);
int git_mbedtls_stream_new(void **out, const char *host, const char *port);
int git_mbedtls_stream_wrap(void **out, void *in, const char *host);
int git_mbedtls__set_cert_location(const char *file, const char *path);
int git_transport_ssh_global_init(void);
int git_http_auth_negotiate(void **out, const void *url);

static int no_tls(void)
{
	git_error_set_str(GIT_ERROR_NET, "replayq is built without TLS transports");
	return -1;
}

static int no_ssh(void)
{
	git_error_set_str(GIT_ERROR_SSH, "replayq is built without SSH transports");
	return -1;
}

int git_mbedtls_stream_global_init(void)
{
	return 0;
}

int git_mbedtls_stream_new(void **out, const char *host, const char *port)
{
	(void)host;
	(void)port;
	*out = NULL;
	return no_tls();
}

int git_mbedtls_stream_wrap(void **out, void *in, const char *host)
{
	(void)in;
	(void)host;
	*out = NULL;
	return no_tls();
}

int git_mbedtls__set_cert_location(const char *file, const char *path)
{
	(void)file;
	(void)path;
	return no_tls();
}

int git_transport_ssh_global_init(void)
{
	return 0;
}

/* An ssh:// remote gets a subtransport whose every action fails (failing
 * to create one would leak the smart transport's memory in libgit2 1.5). */
static int nossh_action(git_smart_subtransport_stream **out, git_smart_subtransport *t,
			const char *url, git_smart_service_t action)
{
	(void)t;
	(void)url;
	(void)action;
	*out = NULL;
	return no_ssh();
}

static int nossh_close(git_smart_subtransport *t)
{
	(void)t;
	return 0;
}

static void nossh_free(git_smart_subtransport *t)
{
	free(t);
}

int git_smart_subtransport_ssh(git_smart_subtransport **out, git_transport *owner, void *param)
{
	git_smart_subtransport *t = calloc(1, sizeof(*t));

	(void)owner;
	(void)param;
	*out = NULL;
	if (!t) {
		git_error_set_oom();
		return -1;
	}
	t->action = nossh_action;
	t->close = nossh_close;
	t->free = nossh_free;
	*out = t;
	return 0;
}

int git_transport_ssh_with_paths(git_transport **out, git_remote *owner, void *payload)
{
	(void)owner;
	(void)payload;
	*out = NULL;
	return no_ssh();
}

int git_http_auth_negotiate(void **out, const void *url)
{
	(void)url;
	*out = NULL;
	git_error_set_str(GIT_ERROR_NET, "replayq is built without GSSAPI authentication");
	return -1;
}
