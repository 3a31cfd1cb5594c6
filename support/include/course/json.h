// A small JSON writer for what the course's binaries report to the grader (the benchmark's
// --json file, the test binary's event stream). Output is compact, on one line, so that a
// line-oriented reader can take one value per line.
//
//   course::JsonWriter json;
//   json.begin_object().field("name", "copy").field("rate", 812.5).field("valid", true);
//   json.key("samples").begin_array().value(1.5).value(2.0).end_array();
//   json.end_object();
//   json.str();  // {"name":"copy","rate":812.5,"valid":true,"samples":[1.5,2]}
//
// Strings are escaped (quotes, backslashes, control characters); numbers are written with the
// fewest digits that read back as the same value; NaN and infinities, which JSON has no words
// for, become null. Misuse (a key outside an object, an unclosed container) throws
// std::logic_error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace course {

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(bool flag);
  JsonWriter& value(double number);
  JsonWriter& value(float number);
  JsonWriter& value(long long number);
  JsonWriter& value(unsigned long long number);
  // Every other integer type, without ambiguity between the overloads above.
  template <class Int, std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>,
                                        int> = 0>
  JsonWriter& value(Int number) {
    if constexpr (std::is_signed_v<Int>)
      return value(static_cast<long long>(number));
    else
      return value(static_cast<unsigned long long>(number));
  }
  JsonWriter& null();

  template <class T>
  JsonWriter& field(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

  // The text so far; complete once every container is closed.
  const std::string& str() const;
  bool complete() const noexcept { return open_.empty() && has_value_; }

 private:
  void before_value();
  void close(char open, char close);

  std::string out_;
  std::vector<char> open_;    // '{' or '[' for each open container
  std::vector<bool> empty_;   // whether it has no element yet
  bool after_key_ = false;
  bool has_value_ = false;    // a top-level value has been started
};

// `text` as the inside of a JSON string literal (without the quotes).
std::string json_escape(std::string_view text);
// The shortest decimal that reads back as exactly `number` (parsed as a double, or for the
// float overload as a float); "null" when it is not finite.
std::string json_number(double number);
std::string json_number(float number);

}  // namespace course
