// hmac_checker: sign files with HMAC-SHA256 and verify their integrity.
//
//   hmac_checker sign <key> <file>
//   hmac_checker verify <key> <file> <hex-tag>
//   hmac_checker --self-test
#include "hmac.hpp"

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace {

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

int self_test() {
    // RFC 4231, test case 2.
    const std::string expected = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
    const std::string actual = hmac::to_hex(hmac::sha256("Jefe", "what do ya want for nothing?"));
    std::cout << "RFC 4231 case 2: " << actual << "\n";
    if (actual != expected) {
        std::cerr << "self-test FAILED (expected " << expected << ")\n";
        return 1;
    }
    std::cout << "self-test passed\n";
    return 0;
}

void usage() {
    std::cerr << "usage: hmac_checker sign <key> <file>\n"
                 "       hmac_checker verify <key> <file> <hex-tag>\n"
                 "       hmac_checker --self-test\n";
}

}  // namespace

int main(int argc, char* argv[]) {
    try {
        if (argc == 2 && std::string(argv[1]) == "--self-test") return self_test();
        if (argc == 4 && std::string(argv[1]) == "sign") {
            std::cout << hmac::to_hex(hmac::sha256(argv[2], read_file(argv[3]))) << "  " << argv[3] << "\n";
            return 0;
        }
        if (argc == 5 && std::string(argv[1]) == "verify") {
            const bool ok = hmac::verify(argv[2], read_file(argv[3]), argv[4]);
            std::cout << argv[3] << ": " << (ok ? "OK" : "MODIFIED") << "\n";
            return ok ? 0 : 2;
        }
        usage();
        return 64;
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    }
}
