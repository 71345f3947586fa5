//===- JsonLimits.cpp - bounds on JSON the tuner parses -------------------===//

#include "JsonLimits.h"

bool kforge::tune::jsonDepthWithin(llvm::StringRef text, unsigned maxDepth) {
  unsigned depth = 0;
  bool inString = false, escaped = false;
  for (char c : text) {
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth)
        return false;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}
