#pragma once
// Reads a Hugging Face config.json (model_type llama, qwen2, qwen3, qwen3_moe, mixtral,
// deepseek_v3) into a ModelConfig. Errors name the file and the key, e.g.
//   "m/config.json: key 'num_key_value_heads': expected an integer, got string".
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "sim/model/model_config.hpp"

namespace headroom::model {

// `path` is a config.json or the folder holding one. The model is named by the config's
// `_name_or_path` (a Hub id), else by the Hugging Face cache folder's id, else by the folder's
// parent and name ("meta-llama/Llama-3.1-8B").
ModelConfig load_hf_config(const std::filesystem::path& path);

// `source` names the file in error messages; `name` becomes ModelConfig::name.
ModelConfig parse_hf_config(const nlohmann::json& json, const std::string& source, const std::string& name);

}  // namespace headroom::model
