// RAII for the OpenSSL handles gpumeter reads PEM through (the HTTP client's client certificate,
// the server's certificate check). Header-only; its users link OpenSSL::Crypto themselves.
#pragma once

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

namespace gpumeter::openssl {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Cert = std::unique_ptr<X509, X509Free>;
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

// A read-only memory BIO over `pem` (which must outlive it); null when out of memory.
inline Bio MemBio(const std::string& pem) {
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}
// The first certificate / private key in `pem`; null when there is none.
inline Cert ReadCert(const std::string& pem) {
  auto b = MemBio(pem);
  return Cert(b ? PEM_read_bio_X509(b.get(), nullptr, nullptr, nullptr) : nullptr);
}
inline Key ReadKey(const std::string& pem) {
  auto b = MemBio(pem);
  return Key(b ? PEM_read_bio_PrivateKey(b.get(), nullptr, nullptr, nullptr) : nullptr);
}

}  // namespace gpumeter::openssl
