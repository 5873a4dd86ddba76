// Store's UTF-8 helper (declared in store.h): proto3 strings must hold
// UTF-8, or the message does not parse back; the store checks what it
// writes (FindNonUtf8Field) and scrubs what it salvages (ScrubUtf8, in
// base/untrusted_input.h).
#include <string>
#include <vector>

#include "base/untrusted_input.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "server/store/store.h"

namespace kbench {

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
