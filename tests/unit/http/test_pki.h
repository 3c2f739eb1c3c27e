// A throw-away PKI made at test time with OpenSSL's API: a CA and leaf certificates it signs,
// written as PEM files into a fresh temporary directory (removed by the destructor). Keys are
// P-256; certificates are valid from an hour ago for two days. Nothing touches the system
// trust store, so a client trusts these only when given ca_file().
#pragma once

#include <cstdint>
#include <string>

typedef struct evp_pkey_st EVP_PKEY;
typedef struct x509_st X509;

namespace hammer::testing {

struct LeafFiles {
  std::string cert;  // PEM certificate
  std::string key;   // PEM private key (unencrypted)
};

class TestPki {
 public:
  TestPki();  // makes the directory and the CA; aborts the test binary on failure
  ~TestPki();
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

  const std::string& dir() const { return dir_; }
  const std::string& ca_file() const { return ca_file_; }

  // A leaf signed by the CA, for `san` (OpenSSL's subjectAltName syntax, e.g.
  // "DNS:localhost,IP:127.0.0.1"), with this serial number, written as NAME.pem / NAME.key
  // (replacing earlier files of that name). `client` makes it a client (not server) certificate.
  LeafFiles IssueLeaf(const std::string& name, const std::string& san, uint64_t serial,
                      bool client = false);
  // A self-signed leaf of the same shape, which ca_file() does not vouch for.
  LeafFiles SelfSigned(const std::string& name, const std::string& san, uint64_t serial);

  // Writes `text` to dir()/name and returns the path.
  std::string WriteFile(const std::string& name, const std::string& text);

 private:
  std::string dir_;
  std::string ca_file_;
  EVP_PKEY* ca_key_ = nullptr;
  X509* ca_cert_ = nullptr;
};

}  // namespace hammer::testing
