// Store's UTF-8 helpers (declared in store.h): proto3 strings must hold
// UTF-8, or the message does not parse back; the store checks what it
// writes and scrubs what it salvages.
#include <string>
#include <vector>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "server/store.h"

namespace kbench {

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
