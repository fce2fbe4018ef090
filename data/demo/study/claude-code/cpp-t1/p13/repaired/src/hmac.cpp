#include "hmac.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <memory>
#include <stdexcept>

namespace hmac {

std::vector<unsigned char> sha256(const std::string& key, const std::string& data) {
    std::unique_ptr<EVP_MAC, decltype(&EVP_MAC_free)> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr), EVP_MAC_free);
    if (!mac) throw std::runtime_error("HMAC is not available in this OpenSSL build");
    std::unique_ptr<EVP_MAC_CTX, decltype(&EVP_MAC_CTX_free)> ctx(EVP_MAC_CTX_new(mac.get()), EVP_MAC_CTX_free);
    if (!ctx) throw std::runtime_error("cannot create HMAC context");

    char digest[] = "SHA256";
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_end(),
    };
    if (EVP_MAC_init(ctx.get(), reinterpret_cast<const unsigned char*>(key.data()), key.size(), params) != 1)
        throw std::runtime_error("HMAC init failed");
    if (EVP_MAC_update(ctx.get(), reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1)
        throw std::runtime_error("HMAC update failed");

    std::vector<unsigned char> out(EVP_MAX_MD_SIZE);
    size_t len = 0;
    if (EVP_MAC_final(ctx.get(), out.data(), &len, out.size()) != 1)
        throw std::runtime_error("HMAC final failed");
    out.resize(len);
    return out;
}

std::string to_hex(const std::vector<unsigned char>& bytes) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    s.reserve(bytes.size() * 2);
    for (unsigned char b : bytes) {
        s.push_back(digits[b >> 4]);
        s.push_back(digits[b & 0x0f]);
    }
    return s;
}

bool verify(const std::string& key, const std::string& data, const std::string& expected_hex) {
    const std::string actual = to_hex(sha256(key, data));
    if (actual.size() != expected_hex.size()) return false;
    return CRYPTO_memcmp(actual.data(), expected_hex.data(), actual.size()) == 0;
}

}  // namespace hmac
