// Static files compiled into the binary: every file of src/assets/ (the HTML report's stylesheet
// and script), embedded at build time by cmake/embed_assets.cmake, so that hammer needs no data
// files at run time and its reports work offline.
//
// The bytes live in read-only static storage for the whole program; views never dangle. Safe
// from any thread.
#pragma once

#include <span>
#include <string_view>

namespace hammer::assets {

// The contents of src/assets/<name> (a file name, no directory), or an empty view when there is
// no such asset.
std::string_view Asset(std::string_view name);

// Every embedded file name, sorted bytewise.
std::span<const std::string_view> AssetNames();

}  // namespace hammer::assets
