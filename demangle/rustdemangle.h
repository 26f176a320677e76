// A Rust v0 symbol decoder ("_RNvMNtCs…_3std5MutexINtB2_…E14lock_contended"
// -> "<std::sync::Mutex<u32>>::lock_contended"): paths (C, N, M, X, Y, I),
// types, consts, identifiers (with punycode), binders and backrefs, after
// rustc's "v0" mangling scheme (RFC 2603). Crate disambiguators (hashes) are
// left out, as `rustc-demangle`'s alternate form does.
//
// The input is a capture's, so hostile: recursion, output length and work
// are bounded, and backrefs may only point backwards. Anything not
// understood makes it return false (the caller shows the raw name).
#ifndef THREADMON_RUSTDEMANGLE_H
#define THREADMON_RUSTDEMANGLE_H

#include <cstddef>
#include <string>

namespace tmon {

// True with *out set when `symbol` is a whole v0 symbol ("_R…", with an
// optional ".suffix") whose readable form fits in maxOut bytes.
bool demangleRustV0(const std::string &symbol, size_t maxOut, std::string *out);

}  // namespace tmon

#endif
