#include "sim/model/model_source.hpp"

#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "sim/core/error.hpp"

#include "sim/model/catalogue.hpp"
#include "sim/model/hf_config.hpp"

namespace headroom::model {

ModelConfig load_model(std::string_view name_or_path) {
  std::filesystem::path p{std::string(name_or_path)};
  std::error_code ec;
  if (std::filesystem::exists(p, ec)) return load_hf_config(p);
  // Hub ids have a '/' too ("deepseek-ai/DeepSeek-R1"); only an absolute or ./ path or a .json file
  // name is surely meant as a file.
  const bool path_like = name_or_path.starts_with('/') || name_or_path.starts_with("./") ||
                         name_or_path.starts_with("../") || name_or_path.ends_with(".json");
  if (path_like)
    throw InputError(fmt::format("{}: no such file or folder (expected a model's config.json or the folder holding it)",
                                 name_or_path));
  return catalogue_model(name_or_path);
}

}  // namespace headroom::model
