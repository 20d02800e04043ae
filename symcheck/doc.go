// Package symcheck turns what elfx reads and rpath resolves into findings
// (package finding), each with its evidence and a fix. At its core is the
// Binder, which binds dynamic symbols and versions the way ld.so does, with
// a TableCache that reads each library's symbol table once. On it rest:
//
//   - Symbols: undefined symbols of a file (bound in its closure, or in a
//     program with BindInHost) or of a set of objects and archives, where a
//     definition exists in a build tree (--index), and what an
//     LLVMInitialize* gap means (DiagnoseLLVM, with the link set);
//   - CheckUnwindFiles, CheckLinkInputs, ParseLinkLine: unwinders in a
//     process and on a link line;
//   - ModuleKind, AsModuleNote: loadable modules, whose undefined symbols
//     the program that loads them provides;
//   - DlopenFindings: what dlopen() from a file would not find, of the
//     libraries its .note.dlopen declares or its read-only data names.
//
// The gate over a tree (package check), install consistency (package
// prefix) and wheel retargeting (package wheel) build on it.
package symcheck
