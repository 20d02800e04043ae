package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Prefix is an install tree under a temporary directory (Root) that
// tests fill with files and gcc-built libraries and programs.
type Prefix struct {
	t    *testing.T
	GCC  string // the gcc that builds
	Root string
}

// NewPrefix is an empty Prefix; gcc is required (Tool).
func NewPrefix(t *testing.T) *Prefix {
	return &Prefix{t: t, GCC: Tool(t, "gcc", "gcc"), Root: t.TempDir()}
}

// File writes content to rel under the prefix and returns its path.
func (p *Prefix) File(rel, content string) string {
	path := filepath.Join(p.Root, rel)
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte(content), 0o644)
	return path
}

// Lib builds the C source src as a shared library at rel with soname,
// args after the source.
func (p *Prefix) Lib(rel, soname, src string, args ...string) string {
	p.t.Helper()
	return p.CC(rel, src, append([]string{"-shared", "-fPIC", "-Wl,-soname," + soname}, args...)...)
}

// CC compiles and links the C source src into rel under the prefix, with
// args after the source (libraries to link).
func (p *Prefix) CC(rel, src string, args ...string) string {
	p.t.Helper()
	c := filepath.Join(p.t.TempDir(), "x.c")
	os.WriteFile(c, []byte(src), 0o644)
	out := filepath.Join(p.Root, rel)
	os.MkdirAll(filepath.Dir(out), 0o755)
	if o, err := exec.Command(p.GCC, append([]string{"-o", out, c}, args...)...).CombinedOutput(); err != nil {
		p.t.Fatalf("gcc: %v\n%s", err, o)
	}
	return out
}
