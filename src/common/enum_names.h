// Enum names kept as data: each enum whose names are a plain list has one constexpr table of
// {value, name} pairs, and these templates read it both ways, so the name and its parse cannot
// drift apart. The tables are C arrays (the size is deduced), each name a string literal (static
// storage: a returned `const char*` stays valid). Pure and constexpr; thread-safe.
//
//   enum class Colour { kRed, kGreen };
//   inline constexpr EnumName<Colour> kColourNames[] = {{Colour::kRed, "red"},
//                                                       {Colour::kGreen, "green"}};
//   static_assert(DistinctEnumNames(kColourNames));
//   EnumToString(kColourNames, Colour::kGreen, "unknown");  // "green"
//   EnumFromString(kColourNames, "blue");                   // nullopt
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace gpumeter {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

// The name of `value`, or `fallback` when the table has none (a value cast from a bad integer).
template <typename E, size_t N>
constexpr const char* EnumToString(const EnumName<E> (&table)[N], E value, const char* fallback) {
  for (const auto& e : table)
    if (e.value == value) return e.name;
  return fallback;
}

// The value named exactly `name` (case and spelling); nullopt for any other text.
template <typename E, size_t N>
constexpr std::optional<E> EnumFromString(const EnumName<E> (&table)[N], std::string_view name) {
  for (const auto& e : table)
    if (name == e.name) return e.value;
  return std::nullopt;
}

// No value and no name listed twice: for a static_assert beside each table, so that a name parses
// back to the value it was written from.
template <typename E, size_t N>
constexpr bool DistinctEnumNames(const EnumName<E> (&table)[N]) {
  for (size_t i = 0; i < N; ++i)
    for (size_t j = i + 1; j < N; ++j)
      if (table[i].value == table[j].value ||
          std::string_view(table[i].name) == std::string_view(table[j].name))
        return false;
  return true;
}

}  // namespace gpumeter
