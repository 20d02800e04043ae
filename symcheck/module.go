package symcheck

import (
	"debug/elf"
	"path/filepath"
	"strings"

	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
)

// Loadable modules: whose undefined symbols the program that loads them
// provides.

// PythonExtension reports whether path is named like a CPython or PyPy
// extension module — its EXT_SUFFIX: name.abi3.so (the stable ABI),
// name.cpython-311-x86_64-linux-gnu.so, name.pypy310-pp73-x86_64-linux-gnu.so.
// Such a module takes the Py* API from the interpreter that imports it
// (extensions do not link libpython), whatever its SONAME: Rust-built ones
// (maturin, setuptools-rust) have one.
func PythonExtension(path string) bool {
	base := filepath.Base(path)
	stem, ok := strings.CutSuffix(base, ".so")
	if !ok {
		return false
	}
	dot := strings.LastIndexByte(stem, '.')
	if dot <= 0 {
		return false
	}
	tag := stem[dot+1:]
	return tag == "abi3" || strings.HasPrefix(tag, "cpython-") || strings.HasPrefix(tag, "pypy")
}

// Unnamed classifies a shared object (not a PIE: no PT_INTERP) without
// DT_SONAME by its file name: lib*.so* is a library that lacks its SONAME
// (missing-soname); any other name is a loadable module — what CMake's
// MODULE libraries, LLVM plugins and Python/Perl extensions look like —
// whose undefined symbols the program loading it provides
// (module-undefined-symbol).
func Unnamed(typ elf.Type, hasInterp bool, d *elfx.Dynamic, path string) (library, module bool) {
	if typ != elf.ET_DYN || d == nil || d.HasSoname || hasInterp {
		return false, false
	}
	base := filepath.Base(path)
	if strings.HasPrefix(base, "lib") {
		return strings.Contains(base, ".so"), false
	}
	return false, true
}

// ModuleKind reports whether the ELF file at path (its type, whether it
// has PT_INTERP, its dynamic section or nil) is a loadable module, and
// whether a Python extension module: a shared object without DT_SONAME
// whose name does not start with lib (see Unnamed), or one named by
// Python's EXT_SUFFIX whatever its SONAME. The program that loads a module
// defines the symbols its own closure leaves undefined.
func ModuleKind(typ elf.Type, hasInterp bool, d *elfx.Dynamic, path string) (module, python bool) {
	_, module = Unnamed(typ, hasInterp, d, path)
	python = typ == elf.ET_DYN && PythonExtension(path)
	return module || python, python
}

// AsModuleNote makes an undefined-symbol finding of the module at path a
// note (RD1006): the program that loads the module may define the symbol.
func AsModuleNote(fd *finding.Finding, path string, python bool) {
	fd.Rule, fd.Severity = finding.RuleModuleUndefined, finding.SeverityNote
	if python {
		fd.Message += " — a Python extension module: the interpreter that imports it defines the Py* API"
	} else {
		fd.Message += " — a loadable module (no SONAME): the program that loads it may define it"
	}
	fd.Fix = "check it in the program that loads the module: rocmdoctor symbols --host PROGRAM " + path
}
