#include "sim/model/model_source.hpp"

#include <filesystem>
#include <string>

#include "sim/model/catalogue.hpp"
#include "sim/model/hf_config.hpp"

namespace headroom::model {

ModelConfig load_model(std::string_view name_or_path) {
  std::filesystem::path p{std::string(name_or_path)};
  std::error_code ec;
  if (std::filesystem::exists(p, ec)) return load_hf_config(p);
  return catalogue_model(name_or_path);
}

}  // namespace headroom::model
