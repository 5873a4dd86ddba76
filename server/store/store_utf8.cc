// Store's UTF-8 helpers (declared in store.h): proto3 strings must hold
// UTF-8, or the message does not parse back; the store checks what it
// writes and scrubs what it salvages.
#include <string>
#include <vector>

#include "base/untrusted_input.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "server/store/store.h"

namespace kbench {

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
