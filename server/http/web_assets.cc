#include "server/http/web_assets.h"

#include <httplib.h>

#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"

namespace kbench {
namespace internal {

// Defined in the generated web_assets_data.cc (cmake/KbenchWebAssets.cmake).
struct WebAssetFile {
  const char* name;
  const char* data;
  size_t size;
};
extern const WebAssetFile kWebAssetFiles[];
extern const size_t kWebAssetFileCount;

}  // namespace internal

namespace {

// The page's scripts, in the order index.html loads them.
constexpr const char* kScripts[] = {"util.js",    "charts.js",  "overview.js",
                                    "profile.js", "session.js", "job.js",
                                    "main.js"};

// Serves the embedded file `name` as `content_type` at GET `path`.
void ServeAsset(httplib::Server& s, const std::string& path,
                const std::string& name, const std::string& content_type) {
  const absl::string_view body = WebAsset(name);
  s.Get(path,
        [body, content_type](const httplib::Request&, httplib::Response& res) {
          res.status = 200;
          res.set_header("Cache-Control", "no-cache");
          res.set_header("X-Content-Type-Options", "nosniff");
          res.set_content(body.data(), body.size(), content_type.c_str());
        });
}

}  // namespace

absl::string_view WebAsset(absl::string_view name) {
  for (size_t i = 0; i < internal::kWebAssetFileCount; ++i) {
    const internal::WebAssetFile& f = internal::kWebAssetFiles[i];
    if (name == f.name) return absl::string_view(f.data, f.size);
  }
  return {};
}

void InstallWebAssetRoutes(httplib::Server& s) {
  ServeAsset(s, "/", "index.html", "text/html; charset=utf-8");
  for (const char* js : kScripts) {
    ServeAsset(s, absl::StrCat("/static/", js), js,
               "application/javascript; charset=utf-8");
  }
  ServeAsset(s, "/static/style.css", "style.css", "text/css; charset=utf-8");
}

}  // namespace kbench
