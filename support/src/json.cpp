#include "course/json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace course {

std::string json_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out;
}

namespace {

// Tries ever more significant digits until the text reads back as the same value; printf's
// "%g" never leaves a bare "." or a leading one, so the result is a valid JSON number.
template <class T, class Parse>
std::string shortest(T number, int max_digits, Parse parse) {
  if (!std::isfinite(number)) return "null";
  char buf[40];
  for (int digits = 1; digits <= max_digits; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(number));
    if (parse(buf) == number) break;
  }
  return buf;
}

}  // namespace

std::string json_number(double number) {
  return shortest(number, 17, [](const char* text) { return std::strtod(text, nullptr); });
}

std::string json_number(float number) {
  return shortest(number, 9, [](const char* text) { return std::strtof(text, nullptr); });
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (open_.empty()) {
    if (has_value_) throw std::logic_error("JsonWriter: a second top-level value");
    has_value_ = true;
    return;
  }
  if (open_.back() == '{') throw std::logic_error("JsonWriter: a value in an object needs a key");
  if (!empty_.back()) out_ += ',';
  empty_.back() = false;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  if (open_.empty() || open_.back() != '{' || after_key_)
    throw std::logic_error("JsonWriter: key \"" + std::string(name) + "\" outside an object");
  if (!empty_.back()) out_ += ',';
  empty_.back() = false;
  out_ += '"';
  out_ += json_escape(name);
  out_ += "\":";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  open_.push_back('{');
  empty_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  open_.push_back('[');
  empty_.push_back(true);
  return *this;
}

void JsonWriter::close(char open, char close) {
  if (open_.empty() || open_.back() != open || after_key_)
    throw std::logic_error(std::string("JsonWriter: unmatched '") + close + "'");
  open_.pop_back();
  empty_.pop_back();
  out_ += close;
}

JsonWriter& JsonWriter::end_object() {
  close('{', '}');
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  close('[', ']');
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  before_value();
  out_ += '"';
  out_ += json_escape(text);
  out_ += '"';
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  before_value();
  out_ += flag ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  before_value();
  out_ += json_number(number);
  return *this;
}

JsonWriter& JsonWriter::value(float number) {
  before_value();
  out_ += json_number(number);
  return *this;
}

JsonWriter& JsonWriter::value(long long number) {
  before_value();
  out_ += std::to_string(number);
  return *this;
}

JsonWriter& JsonWriter::value(unsigned long long number) {
  before_value();
  out_ += std::to_string(number);
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

const std::string& JsonWriter::str() const {
  if (!complete()) throw std::logic_error("JsonWriter: the value is not complete");
  return out_;
}

}  // namespace course
