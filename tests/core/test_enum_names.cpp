#include <catch2/catch.hpp>

#include "sim/core/enum_names.hpp"

using namespace headroom;

namespace {

enum class Fruit { apple, pear, quince };

constexpr std::array<EnumName<Fruit>, 5> kFruitNames{{
    {Fruit::apple, "apple"},
    {Fruit::apple, "malus", Spelling::alias},
    {Fruit::pear, "PEAR"},
    {Fruit::pear, "pyrus"},
    {Fruit::quince, "quince", Spelling::name_only},
}};

}  // namespace

TEST_CASE("enum_names: the first spelling of a value is its name and aliases are read but not written") {
  CHECK(enum_name(kFruitNames, Fruit::apple) == "apple");
  CHECK(enum_name(kFruitNames, Fruit::pear) == "PEAR");
  CHECK(enum_name(kFruitNames, Fruit::quince) == "quince");
  CHECK(enum_name(kFruitNames, static_cast<Fruit>(7)) == "?");
  CHECK(parse_enum(kFruitNames, "apple", "x") == Fruit::apple);
  CHECK(parse_enum(kFruitNames, "malus", "x") == Fruit::apple);
  CHECK(parse_enum(kFruitNames, "pyrus", "x") == Fruit::pear);
}

TEST_CASE("enum_names: the error lists the listed spellings in table order and name-only is never read") {
  CHECK(enum_name_list(kFruitNames) == "apple, PEAR, pyrus");
  CHECK_THROWS_WITH(parse_enum(kFruitNames, "quince", "fruit.kind"),
                    "fruit.kind: expected one of apple, PEAR, pyrus, got 'quince'");
  CHECK_THROWS_AS(parse_enum(kFruitNames, "", "x"), InputError);
  CHECK_THROWS_AS(parse_enum(kFruitNames, "apples", "x"), InputError);
}

TEST_CASE("enum_names: case is exact unless the reader asks for any case") {
  CHECK_THROWS_WITH(parse_enum(kFruitNames, "pear", "x"), "x: expected one of apple, PEAR, pyrus, got 'pear'");
  CHECK(parse_enum(kFruitNames, "pear", "x", NameCase::any) == Fruit::pear);
  CHECK(parse_enum(kFruitNames, "Malus", "x", NameCase::any) == Fruit::apple);
  CHECK_THROWS_AS(parse_enum(kFruitNames, "pea", "x", NameCase::any), InputError);
}
