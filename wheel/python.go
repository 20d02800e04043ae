package wheel

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// systemPythonDirs are where a distribution's interpreters live, looked at
// after PATH when python3 there is a version manager's shim.
var systemPythonDirs = []string{"/usr/local/bin", "/usr/bin"}

// DefaultPython is the interpreter a wheel's extension modules are bound
// against when none is named (Options.Python): python3 on pathEnv (a PATH
// value) when it is an ELF program, unless wheelFile (a .whl file name, ""
// for none) is tagged for another CPython version (cp312), whose python3.12
// is then used if there is one. A pyenv or asdf shim is a script: then the
// wheel's python3.Y or the system's python3, each an ELF program, on
// pathEnv or in /usr/local/bin and /usr/bin. py is "" when none is found
// (extension modules are then not bound, and their undefined names are
// notes); note says what was passed over, for a warning.
func DefaultPython(wheelFile, pathEnv string) (py, note string) {
	return defaultPython(wheelFile, pathEnv, systemPythonDirs)
}

var cpTag = regexp.MustCompile(`^cp3([0-9]+)$`)

// wheelPython is the interpreter name a wheel's file name asks for
// (python3.12 for a cp312 tag), "" when it names none or several.
func wheelPython(wheel string) string {
	parts := strings.Split(strings.TrimSuffix(filepath.Base(wheel), ".whl"), "-")
	if len(parts) < 5 || !strings.HasSuffix(wheel, ".whl") {
		return ""
	}
	pyTag, abiTag := parts[len(parts)-3], parts[len(parts)-2]
	if abiTag == "abi3" || abiTag == "none" {
		return "" // any CPython 3 from its minimum on
	}
	m := cpTag.FindStringSubmatch(pyTag)
	if m == nil {
		return ""
	}
	return "python3." + m[1]
}

func defaultPython(wheel, pathEnv string, sysDirs []string) (py, note string) {
	want := wheelPython(wheel)
	look := func(name string) string {
		dirs := append(filepath.SplitList(pathEnv), sysDirs...)
		for _, d := range dirs {
			if d == "" {
				continue
			}
			if real, ok := elfProgram(filepath.Join(d, name)); ok {
				return real
			}
		}
		return ""
	}
	onPath, shim := "", ""
	for _, d := range filepath.SplitList(pathEnv) {
		p := filepath.Join(d, "python3")
		if _, err := os.Stat(p); d == "" || err != nil {
			continue
		}
		if real, ok := elfProgram(p); ok {
			onPath = real
		} else {
			shim = p
		}
		break
	}
	// python3 -> python3.11: the version its name says.
	if onPath != "" && (want == "" || filepath.Base(onPath) == want) {
		return onPath, ""
	}
	if want != "" {
		if p := look(want); p != "" {
			return p, ""
		}
		if onPath != "" {
			return onPath, fmt.Sprintf("the wheel is tagged for %s, which was not found: extension modules are bound against %s; give --python PATH", want, onPath)
		}
	} else if p := look("python3"); p != "" {
		why := "no python3 on PATH"
		if shim != "" {
			why = fmt.Sprintf("python3 on PATH (%s) is not an ELF program (a version manager's shim?)", shim)
		}
		return p, fmt.Sprintf("%s: extension modules are bound against %s; give --python PATH for another", why, p)
	}
	if shim != "" {
		return "", fmt.Sprintf("python3 on PATH (%s) is not an ELF program (a version manager's shim?) and no %s was found: extension modules are not bound against an interpreter; give --python PATH", shim, cmp.Or(want, "python3"))
	}
	return "", ""
}

// elfProgram resolves p's links and reports whether the file is ELF.
func elfProgram(p string) (string, bool) {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	f, err := os.Open(real)
	if err != nil {
		return "", false
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil || string(magic[:]) != "\x7fELF" {
		return "", false
	}
	return real, true
}
