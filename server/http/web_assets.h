// The dashboard's web app (server/web/: index.html, style.css and the
// scripts util.js, charts.js, overview.js, session.js, job.js, main.js),
// embedded in kbd at build time by cmake/KbenchWebAssets.cmake, and the
// HTTP routes that serve it:
//
//   GET /                  index.html   text/html; charset=utf-8
//   GET /static/NAME.js    NAME.js      application/javascript; charset=utf-8
//   GET /static/style.css  style.css    text/css; charset=utf-8
//
// Every reply carries Cache-Control: no-cache, so a rebuilt kbd's files are
// picked up on the next load. The app reads the JSON API of the dashboard
// (/api/...) from the same origin.
//
// Thread safety: the embedded files are immutable; the routes are
// stateless.
#ifndef KBENCH_SERVER_HTTP_WEB_ASSETS_H_
#define KBENCH_SERVER_HTTP_WEB_ASSETS_H_

#include "absl/strings/string_view.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace kbench {

// The embedded bytes of the web file `name` ("index.html", "util.js",
// "style.css", ...); empty when there is none of that name.
absl::string_view WebAsset(absl::string_view name);

// Serves the web app on `s` (routes above). Call before the server starts;
// fits HttpServer::Options::routes.
void InstallWebAssetRoutes(httplib::Server& s);

}  // namespace kbench

#endif  // KBENCH_SERVER_HTTP_WEB_ASSETS_H_
