#include "test_pki.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace hammer::testing {

namespace {

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "TestPki: %s failed\n", what);
  std::abort();
}

EVP_PKEY* NewKey() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  if (key == nullptr) Die("EVP_EC_gen");
  return key;
}

void AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) Die("X509V3_EXT_conf_nid");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// An unsigned certificate for `key` named `common_name`, issued by `issuer` (itself when null).
X509* NewCertificate(EVP_PKEY* key, const std::string& common_name, uint64_t serial, X509* issuer) {
  X509* cert = X509_new();
  X509_set_version(cert, 2);  // v3
  ASN1_INTEGER_set_uint64(X509_get_serialNumber(cert), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 2 * 86400);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  X509_set_issuer_name(cert, issuer != nullptr ? X509_get_subject_name(issuer) : name);
  return cert;
}

void Sign(X509* cert, EVP_PKEY* key) {
  if (X509_sign(cert, key, EVP_sha256()) == 0) Die("X509_sign");
}

void WritePem(const std::string& path, X509* cert, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) Die("fopen");
  if (cert != nullptr && PEM_write_X509(f, cert) != 1) Die("PEM_write_X509");
  if (key != nullptr && PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    Die("PEM_write_PrivateKey");
  }
  std::fclose(f);
}

}  // namespace

TestPki::TestPki() {
  std::string pattern = (std::filesystem::temp_directory_path() / "hammer-pki-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) Die("mkdtemp");
  dir_ = pattern;
  ca_key_ = NewKey();
  ca_cert_ = NewCertificate(ca_key_, "hammer unit test CA", 1, nullptr);
  AddExtension(ca_cert_, ca_cert_, NID_basic_constraints, "critical,CA:TRUE");
  AddExtension(ca_cert_, ca_cert_, NID_key_usage, "critical,keyCertSign,cRLSign");
  Sign(ca_cert_, ca_key_);
  ca_file_ = dir_ + "/ca.pem";
  WritePem(ca_file_, ca_cert_, nullptr);
}

TestPki::~TestPki() {
  X509_free(ca_cert_);
  EVP_PKEY_free(ca_key_);
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

LeafFiles TestPki::IssueLeaf(const std::string& name, const std::string& san, uint64_t serial,
                             bool client) {
  EVP_PKEY* key = NewKey();
  X509* cert = NewCertificate(key, name, serial, ca_cert_);
  AddExtension(cert, ca_cert_, NID_subject_alt_name, san.c_str());
  AddExtension(cert, ca_cert_, NID_basic_constraints, "critical,CA:FALSE");
  AddExtension(cert, ca_cert_, NID_key_usage, "critical,digitalSignature");
  AddExtension(cert, ca_cert_, NID_ext_key_usage, client ? "clientAuth" : "serverAuth");
  Sign(cert, ca_key_);
  LeafFiles files{dir_ + "/" + name + ".pem", dir_ + "/" + name + ".key"};
  WritePem(files.cert, cert, nullptr);
  WritePem(files.key, nullptr, key);
  X509_free(cert);
  EVP_PKEY_free(key);
  return files;
}

LeafFiles TestPki::SelfSigned(const std::string& name, const std::string& san, uint64_t serial) {
  EVP_PKEY* key = NewKey();
  X509* cert = NewCertificate(key, name, serial, nullptr);
  AddExtension(cert, cert, NID_subject_alt_name, san.c_str());
  Sign(cert, key);
  LeafFiles files{dir_ + "/" + name + ".pem", dir_ + "/" + name + ".key"};
  WritePem(files.cert, cert, nullptr);
  WritePem(files.key, nullptr, key);
  X509_free(cert);
  EVP_PKEY_free(key);
  return files;
}

std::string TestPki::WriteFile(const std::string& name, const std::string& text) {
  std::string path = dir_ + "/" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace hammer::testing
