// A command line split as a POSIX shell splits it (sim/core/shell_words.hpp).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/core/shell_words.hpp"

using headroom::shell_join;
using headroom::shell_words;
using V = std::vector<std::string>;

TEST_CASE("shell words: blanks, quotes, escapes and continued lines as a shell reads them") {
  CHECK(shell_words("vllm serve  m\t--port 8000", "x") == V{"vllm", "serve", "m", "--port", "8000"});
  CHECK(shell_words("a 'b c' \"d e\" f\\ g", "x") == V{"a", "b c", "d e", "f g"});
  CHECK(shell_words("--api-key='it''s' \"say \\\"hi\\\" \\$HOME\"", "x") == V{"--api-key=its", "say \"hi\" $HOME"});
  CHECK(shell_words("'a\\b'", "x") == V{"a\\b"});  // no escapes inside single quotes
  CHECK(shell_words("vllm serve m \\\n  --max-num-seqs 8 \\\r\n --enforce-eager", "x") ==
        V{"vllm", "serve", "m", "--max-num-seqs", "8", "--enforce-eager"});
  CHECK(shell_words("'' x", "x") == V{"", "x"});  // an empty quoted word is a word
  CHECK(shell_words("   ", "x").empty());
}

TEST_CASE("shell words: an unterminated quote or a trailing backslash is an error naming where it starts") {
  auto message = [](const std::string& text) {
    try {
      shell_words(text, "--cmd");
    } catch (const headroom::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("vllm serve 'm") == "--cmd: unterminated ' quote starting at character 12");
  CHECK(message("a \"b") == "--cmd: unterminated \" quote starting at character 3");
  CHECK(message("a b\\") == "--cmd: a backslash with nothing after it starting at character 4");
}

TEST_CASE("shell words: joined back, a line splits into the same words") {
  const V words = {"vllm", "serve", "my model", "--api-key=it's", "--x", ""};
  CHECK(shell_join(words) == "vllm serve 'my model' '--api-key=it'\\''s' --x ''");
  CHECK(shell_words(shell_join(words), "x") == words);
}
