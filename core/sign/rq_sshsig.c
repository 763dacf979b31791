/* SPDX-License-Identifier: GPL-2.0-only */
/* follows OpenSSH's PROTOCOL.sshsig and the armour of its sshsig.c */
/*
 * rq_sshsig: the SSHSIG blobs and their armour (see rq_sshsig.h).
 */
#include "rq_sshsig.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "rq_sshwire.h"

#define MAGIC	   "SSHSIG"
#define VERSION	   1
#define HASH	   "sha512"
#define ARMOR_BEG  "-----BEGIN SSH SIGNATURE-----\n"
#define ARMOR_END  "-----END SSH SIGNATURE-----\n"
#define ARMOR_COLS 70

void rq_sshsig_signed_data(const char *ns, const void *message, size_t len, rq_buf *out)
{
	unsigned char h[crypto_hash_sha512_BYTES];

	crypto_hash_sha512(h, message, len);
	rq_buf_add(out, MAGIC, strlen(MAGIC));
	rq_sshwire_put_cstring(out, ns);
	rq_sshwire_put_string(out, "", 0);
	rq_sshwire_put_cstring(out, HASH);
	rq_sshwire_put_string(out, h, sizeof(h));
}

/* bin in base64 (RFC 4648, padded), a newline every ARMOR_COLS
 * characters and at the end. A signature is public: a table lookup will
 * do (libsodium's encoder is made to leak no timing, at thrice the cost). */
static void base64_lines(const unsigned char *bin, size_t n, rq_buf *out)
{
	static const char digits[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char line[ARMOR_COLS + 1];
	size_t col = 0;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)bin[i] << 16 | (i + 1 < n ? (unsigned)bin[i + 1] << 8 : 0) |
			     (i + 2 < n ? bin[i + 2] : 0);
		char quad[4] = {digits[v >> 18], digits[v >> 12 & 63],
				i + 1 < n ? digits[v >> 6 & 63] : '=',
				i + 2 < n ? digits[v & 63] : '='};
		for (int k = 0; k < 4; k++) {
			line[col++] = quad[k];
			if (col == ARMOR_COLS) {
				line[col++] = '\n';
				rq_buf_add(out, line, col);
				col = 0;
			}
		}
	}
	if (col) {
		line[col++] = '\n';
		rq_buf_add(out, line, col);
	}
}

void rq_sshsig_armor(const char *ns, const void *pubkey, size_t pubkey_len, const void *sig,
		     size_t sig_len, rq_buf *out)
{
	rq_buf blob = {0};

	rq_buf_add(&blob, MAGIC, strlen(MAGIC));
	rq_sshwire_put_u32(&blob, VERSION);
	rq_sshwire_put_string(&blob, pubkey, pubkey_len);
	rq_sshwire_put_cstring(&blob, ns);
	rq_sshwire_put_string(&blob, "", 0);
	rq_sshwire_put_cstring(&blob, HASH);
	rq_sshwire_put_string(&blob, sig, sig_len);
	rq_buf_str(out, ARMOR_BEG);
	if (blob.oom)
		out->oom = 1;
	else
		base64_lines((const unsigned char *)blob.p, blob.len, out);
	rq_buf_str(out, ARMOR_END);
	free(blob.p);
}
