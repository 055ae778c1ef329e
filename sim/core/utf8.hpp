#pragma once
// Whether bytes are well-formed UTF-8 (RFC 3629 §4: no overlong forms, no surrogates, nothing
// above U+10FFFF). YAML and JSON text must be UTF-8; yaml-cpp reads other bytes as they are but
// writes each bad byte as U+FFFD, so a file with them would not read back the same.
#include <string_view>

namespace headroom {

bool is_valid_utf8(std::string_view text);

}  // namespace headroom
