#pragma once
// A model named the way users name it: a catalogue name or Hub id, or a path to a Hugging Face
// config.json (or the folder holding it).
#include <string_view>

#include "sim/model/model_config.hpp"

namespace headroom::model {

// An existing file or folder is read as config.json; anything else is looked up in the catalogue
// (an unknown name is an InputError with a did-you-mean).
ModelConfig load_model(std::string_view name_or_path);

}  // namespace headroom::model
