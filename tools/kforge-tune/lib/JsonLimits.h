//===- JsonLimits.h - bounds on JSON the tuner parses -----------*- C++ -*-===//
//
// llvm::json::parse (and nlohmann's parser) recurse once per nesting level: a document of 60,000 '[' overflows
// the stack. Text from outside (a file, an LLM's reply) is scanned first, in linear time and constant space.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TUNE_JSONLIMITS_H
#define KFORGE_TUNE_JSONLIMITS_H

#include "llvm/ADT/StringRef.h"

namespace kforge::tune {

/// True when no array or object in `text` is nested more than `maxDepth` deep (brackets inside strings do not
/// count). Says nothing else about `text`: whether it is JSON is the parser's to say.
bool jsonDepthWithin(llvm::StringRef text, unsigned maxDepth);

} // namespace kforge::tune

#endif // KFORGE_TUNE_JSONLIMITS_H
