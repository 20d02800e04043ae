// Package check is the gate: Run walks files, directories and wheels and
// runs every check that applies to each file — the hygiene rules (stack,
// text relocations, RPATH/RUNPATH, SONAME, interpreter, glibc versions),
// binding in the file's closure (package symcheck), unwinders, dlopen()
// notes, the LLVMInitialize* gap in archives, composable_kernel configs
// (package ck), device code against GPU targets (package gpu), and a
// wheel's members and RECORD. The rest of the scan decides how a file is
// used (evidence.go: a library nothing loads, a module a program defines
// symbols for), and the findings are reported by rule ID (finding.Rules)
// after the configuration file's ignores and severities and the baseline,
// as JSON, SARIF or JUnit.
package check
