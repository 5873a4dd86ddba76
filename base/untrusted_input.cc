#include "base/untrusted_input.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace kbench {
namespace {

constexpr size_t kMaxIdBytes = 128;

// Printable form of an id for messages: at most 40 bytes, bytes outside
// printable ASCII as \xNN, so the message itself stays safe to log.
std::string Quote(absl::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < 40; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppend(&out, "\\x", absl::Hex(c, absl::kZeroPad2));
    }
  }
  if (s.size() > 40) out += "...";
  return out;
}

bool IsIdChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' ||
         c == '_' || c == ':' || c == '-';
}

absl::Status CheckId(absl::string_view id, absl::string_view what,
                     absl::string_view source) {
  if (id.size() > kMaxIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is ", id.size(), " bytes; at most ", kMaxIdBytes,
                     " are allowed (letters, digits, '.', '_', ':', '-')"));
  }
  for (char c : id) {
    if (!IsIdChar(c)) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, " '", Quote(id),
          "' has a character outside letters, digits, '.', '_', ':' and '-'",
          source.empty() ? "" : "; use ", source));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckJsonLimits(absl::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("the JSON text is ", text.size(), " bytes; at most ",
                     limits.max_bytes, " are accepted"));
  }
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // The escaped character cannot end the string.
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limits.max_depth) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the JSON nests arrays and objects more than ", limits.max_depth,
            " deep (at byte ", i, "); tool arguments are flat objects"));
      }
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<nlohmann::json> ParseUntrustedJson(absl::string_view text,
                                                  const JsonLimits& limits) {
  if (absl::Status s = CheckJsonLimits(text, limits); !s.ok()) return s;
  nlohmann::json out = nlohmann::json::parse(text.begin(), text.end(),
                                             /*cb=*/nullptr,
                                             /*allow_exceptions=*/false);
  if (!out.is_discarded()) return out;
  // Re-parse with exceptions only to get the position for the message.
  try {
    const nlohmann::json again =
        nlohmann::json::parse(text.begin(), text.end());
    (void)again;
  } catch (const nlohmann::json::parse_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("not valid JSON: ", e.what()));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("not valid JSON: ", e.what()));
  }
  return absl::InvalidArgumentError("not valid JSON");
}

absl::Status ValidateSessionId(absl::string_view id, absl::string_view what,
                               absl::string_view source) {
  if (id.empty()) return absl::OkStatus();
  return CheckId(id, what, source);
}

absl::Status ValidateJobId(absl::string_view id, absl::string_view what,
                           absl::string_view source) {
  if (id.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is required"));
  }
  return CheckId(id, what, source);
}

absl::Status ValidateFileName(absl::string_view name, absl::string_view what) {
  if (name.empty()) return absl::OkStatus();
  if (name.size() > kMaxIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is ", name.size(), " bytes; at most ", kMaxIdBytes,
                     " are allowed, e.g. kernel.cu"));
  }
  bool ok = name.front() != '.' && name.front() != '-' && name.front() != ' ' &&
            name.back() != ' ';
  for (char c : name) {
    ok = ok && (absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
                c == '.' || c == '_' || c == '+' || c == '-' || c == ' ');
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " '", Quote(name),
        "' is not a plain file name: use letters, digits, spaces, '.', '_', "
        "'+' and '-' (no directories or control characters), not starting "
        "with '.', '-' or a space, e.g. kernel.cu"));
  }
  return absl::OkStatus();
}

bool IsValidUtf8(absl::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    const unsigned char c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    int n = 0;
    unsigned char lo = 0x80, hi = 0xbf;  // Range of the second byte.
    if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c == 0xe0) lo = 0xa0;  // No overlong forms.
      if (c == 0xed) hi = 0x9f;  // No UTF-16 surrogates.
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;  // Nothing above U+10FFFF.
    } else {
      return false;
    }
    if (end - p <= n || p[1] < lo || p[1] > hi) return false;
    for (int i = 2; i <= n; ++i) {
      if ((p[i] & 0xc0) != 0x80) return false;
    }
    p += n + 1;
  }
  return true;
}

absl::Status ValidateUtf8(absl::string_view text, absl::string_view what) {
  if (IsValidUtf8(text)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(what, " is not valid UTF-8"));
}

absl::Status ValidateText(absl::string_view text, size_t max_bytes,
                          absl::string_view what) {
  if (text.size() > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is ", text.size(),
                                                   " bytes; at most ",
                                                   max_bytes, " are allowed"));
  }
  RETURN_IF_ERROR(ValidateUtf8(text, what));
  // Bytes of multi-byte sequences are all >= 0x80, so a byte scan finds
  // every control character.
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7f) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, " has a control character (byte ", i, ")"));
    }
  }
  return absl::OkStatus();
}

std::string ScrubUtf8(absl::string_view text) {
  if (IsValidUtf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  size_t i = 0;
  while (i < text.size()) {
    // The longest well-formed sequence at i is at most 4 bytes.
    size_t len = 0;
    for (size_t n = 1; n <= 4 && i + n <= text.size(); ++n) {
      if (IsValidUtf8(text.substr(i, n))) {
        len = n;
        break;
      }
    }
    if (len == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    } else {
      out.append(text.data() + i, len);
      i += len;
    }
  }
  return out;
}

absl::string_view Utf8Prefix(absl::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
    --end;
  }
  return text.substr(0, end);
}

std::string FindNonUtf8Field(const google::protobuf::Message& message) {
  using google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* r = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(message, &fields);
  for (const FieldDescriptor* f : fields) {
    if (f->type() == FieldDescriptor::TYPE_STRING) {
      if (f->is_repeated()) {
        for (int i = 0; i < r->FieldSize(message, f); ++i) {
          if (!IsValidUtf8(r->GetRepeatedString(message, f, i))) {
            return f->full_name();
          }
        }
      } else if (!IsValidUtf8(r->GetString(message, f))) {
        return f->full_name();
      }
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) {
        for (int i = 0; i < r->FieldSize(message, f); ++i) {
          std::string bad =
              FindNonUtf8Field(r->GetRepeatedMessage(message, f, i));
          if (!bad.empty()) return bad;
        }
      } else {
        std::string bad = FindNonUtf8Field(r->GetMessage(message, f));
        if (!bad.empty()) return bad;
      }
    }
  }
  return "";
}

}  // namespace kbench
