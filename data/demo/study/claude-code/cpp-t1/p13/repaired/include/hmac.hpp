#pragma once

#include <string>
#include <vector>

namespace hmac {

// Computes HMAC-SHA256 of data under key and returns the raw 32-byte tag.
std::vector<unsigned char> sha256(const std::string& key, const std::string& data);

// Lower-case hexadecimal encoding of bytes.
std::string to_hex(const std::vector<unsigned char>& bytes);

// Constant-time comparison of a computed tag with an expected hex string.
bool verify(const std::string& key, const std::string& data, const std::string& expected_hex);

}  // namespace hmac
