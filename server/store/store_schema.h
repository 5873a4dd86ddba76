// The Store's SQLite schema and its migrations, kept in `PRAGMA
// user_version`.
//
// Thread safety: MigrateStoreSchema uses the connection it is given; callers
// serialize use of that connection.
#ifndef KBENCH_SERVER_STORE_STORE_SCHEMA_H_
#define KBENCH_SERVER_STORE_STORE_SCHEMA_H_

#include "absl/status/status.h"

struct sqlite3;

namespace kbench {

// The schema version this build writes and reads.
inline constexpr int kStoreSchemaVersion = 4;

// Brings the database to kStoreSchemaVersion in one write transaction:
// creates every table on an empty database, applies the steps between the
// stored version and the current one otherwise. FailedPrecondition when the
// database was written by a newer kbd.
absl::Status MigrateStoreSchema(sqlite3* db);

}  // namespace kbench

#endif  // KBENCH_SERVER_STORE_STORE_SCHEMA_H_
