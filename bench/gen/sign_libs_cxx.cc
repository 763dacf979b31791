// SPDX-License-Identifier: GPL-2.0-only
// sign_libs_cxx: Crypto++'s Ed25519 (its C++ API: Donna::ed25519_sign)
// for bench/gen/sign_libs.c, which is C.
#include <crypto++/donna.h>

extern "C" int sign_libs_cryptopp(unsigned char *sig, const unsigned char *msg, size_t len,
				  const unsigned char *seed, const unsigned char *pk)
{
	return CryptoPP::Donna::ed25519_sign(msg, len, seed, pk, sig) == 0;
}
