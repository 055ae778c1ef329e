#pragma once
// Built-in models, with the figures of their Hugging Face config.json files
// (docs/serving-memory-model.md §7), so a scenario can name a model without a config file.
#include <string>
#include <string_view>
#include <vector>

#include "sim/model/model_config.hpp"

namespace headroom::model {

// Catalogue names in a fixed order (the order `headroom` lists them in).
const std::vector<std::string>& catalogue_names();

// Looks a model up by catalogue name or Hugging Face repository id (e.g. "meta-llama/Llama-3.1-8B",
// "deepseek-ai/DeepSeek-R1"), ignoring case. Throws InputError with a did-you-mean for unknown names.
ModelConfig catalogue_model(std::string_view name);

}  // namespace headroom::model
