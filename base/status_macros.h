// RETURN_IF_ERROR and ASSIGN_OR_RETURN for absl::Status / absl::StatusOr<T>.
// Abseil 20220623 ships neither, so they are written once here.
#ifndef KBENCH_BASE_STATUS_MACROS_H_
#define KBENCH_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Evaluates `expr` (an absl::Status); returns it from the enclosing function
// when it is not OK.
#define RETURN_IF_ERROR(expr)                        \
  do {                                               \
    ::absl::Status kb_status_macro_status_ = (expr); \
    if (!kb_status_macro_status_.ok()) {             \
      return kb_status_macro_status_;                \
    }                                                \
  } while (false)

#define KB_STATUS_MACROS_CONCAT_INNER_(x, y) x##y
#define KB_STATUS_MACROS_CONCAT_(x, y) KB_STATUS_MACROS_CONCAT_INNER_(x, y)

// ASSIGN_OR_RETURN(lhs, expr): evaluates `expr` (an absl::StatusOr<T>); on
// error returns its status, else moves the value into `lhs`, which may be a
// declaration (`auto x`) or an existing variable.
#define ASSIGN_OR_RETURN(lhs, expr) \
  KB_ASSIGN_OR_RETURN_IMPL_(        \
      KB_STATUS_MACROS_CONCAT_(kb_status_or_value_, __LINE__), lhs, expr)

#define KB_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                              \
  if (!statusor.ok()) {                                \
    return std::move(statusor).status();               \
  }                                                    \
  lhs = std::move(statusor).value()

#endif  // KBENCH_BASE_STATUS_MACROS_H_
