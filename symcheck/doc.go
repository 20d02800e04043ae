// Package symcheck turns what elfx reads and rpath resolves into findings
// (package finding), each with its evidence and a fix. At its core is the
// Binder, which binds dynamic symbols and versions the way ld.so does. On
// it rest:
//
//   - Symbols: undefined symbols of a file (bound in its closure, or in a
//     program with BindInHost) or of a set of objects and archives, where a
//     definition exists in a build tree (--index), and what an
//     LLVMInitialize* gap means (DiagnoseLLVM, with the link set);
//   - CheckUnwindFiles, CheckLinkInputs, ParseLinkLine: unwinders in a
//     process and on a link line;
//   - Check: the gate over a tree, which runs all of them, package ck's
//     and package gpu's checks and the hygiene rules, lets the rest of
//     the scan decide how a file is used
//     (evidence.go), and reports by rule ID (finding.Rules) as JSON,
//     SARIF or JUnit, with configuration files and baselines.
package symcheck
