#pragma once
// The parsers that read from a path (trace readers, load_hf_config) get the fuzz input through a
// real file: one per process in a private folder under the system temp folder, rewritten for each
// input and removed at exit.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace headroom::fuzz {

class ScratchFolder {
 public:
  ScratchFolder() {
    folder_ = std::filesystem::temp_directory_path() / ("headroom-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(folder_);
  }
  ~ScratchFolder() {
    std::error_code ec;
    std::filesystem::remove_all(folder_, ec);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;

  const std::filesystem::path& path() const { return folder_; }

  // Writes `bytes` to the file `name` in the folder and returns its path.
  std::filesystem::path write(const std::string& name, std::string_view bytes) const {
    std::filesystem::path file = folder_ / name;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) throw std::runtime_error("cannot write the fuzz scratch file " + file.string());
    return file;
  }

 private:
  std::filesystem::path folder_;
};

// The process's scratch folder (made on first use).
inline const ScratchFolder& scratch() {
  static const ScratchFolder folder;
  return folder;
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace headroom::fuzz
