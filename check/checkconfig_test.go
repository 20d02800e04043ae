package check

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/finding"
)

func TestFindConfigUpwardTOMLBeforeYAML(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b")
	os.MkdirAll(deep, 0o755)
	if got := FindConfig(deep); got != "" && filepath.Dir(got) == root {
		t.Fatalf("found %s before writing any", got)
	}
	y := filepath.Join(root, "a", ".rocmdoctor.yml")
	os.WriteFile(y, []byte("glibc: 2.30\n"), 0o644)
	if got := FindConfig(deep); got != y {
		t.Fatalf("FindConfig = %q, want %q", got, y)
	}
	var o Options
	if _, err := LoadConfig(y, &o); err != nil || o.Glibc != "2.30" {
		t.Errorf("LoadConfig(yaml): glibc %q, err %v (2.30 must stay a string)", o.Glibc, err)
	}
	tm := filepath.Join(root, "a", ".rocmdoctor.toml")
	os.WriteFile(tm, []byte("glibc = \"2.28\"\n"), 0o644)
	if got := FindConfig(deep); got != tm {
		t.Errorf("with both: FindConfig = %q, want the TOML %q", got, tm)
	}
}

// gpu_targets: an array or a CMake-style list, each a valid target ID;
// targets given as flags win.
func TestLoadConfigGPUTargets(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		file, text string
		want       []string
		err        string
	}{
		{".rocmdoctor.toml", "gpu_targets = [\"gfx90a\", \"gfx1100:xnack+\"]\n", []string{"gfx90a", "gfx1100:xnack+"}, ""},
		{".rocmdoctor.toml", "gpu_targets = \"gfx90a;gfx1030, gfx942\"\n", []string{"gfx90a", "gfx1030", "gfx942"}, ""},
		{".rocmdoctor.yaml", "gpu_targets: [gfx90a, gfx1100]\n", []string{"gfx90a", "gfx1100"}, ""},
		{".rocmdoctor.toml", "gpu_targets = [\"gfx90a:foo\"]\n", nil, `gpu_targets: "gfx90a:foo"`},
		{".rocmdoctor.toml", "gpu_targets = true\n", nil, "gpu_targets must be an array of strings or a string"},
	} {
		p := filepath.Join(dir, tt.file)
		os.WriteFile(p, []byte(tt.text), 0o644)
		var o Options
		_, err := LoadConfig(p, &o)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), p+": ") {
				t.Errorf("%q: err %v, want one naming the file and saying %q", tt.text, err, tt.err)
			}
		case err != nil || !slices.Equal(o.GPUTargets, tt.want):
			t.Errorf("%q: targets %q, err %v; want %q", tt.text, o.GPUTargets, err, tt.want)
		}
		os.Remove(p)
	}
	p := filepath.Join(dir, ".rocmdoctor.toml")
	os.WriteFile(p, []byte("gpu_targets = [\"gfx90a\"]\n"), 0o644)
	o := Options{GPUTargets: []string{"gfx942"}}
	if _, err := LoadConfig(p, &o); err != nil || !slices.Equal(o.GPUTargets, []string{"gfx942"}) {
		t.Errorf("flags then file: %q, %v; want the flag's gfx942", o.GPUTargets, err)
	}
}

// The whole of TOML and YAML is read (the home-made subset refused
// multi-line arrays, inline tables, dotted keys, """ strings, YAML flow
// mappings and anchors); an unknown key or a value of the wrong type is
// an error with the file and line.
func TestLoadConfigFormats(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, src string
		err       string // "" when it loads
		want      string // what it loads, as %v of the options read
	}{
		{".rocmdoctor.toml", "gpu_targets = [\n  \"gfx90a\",\n  \"gfx1100\", # the new one\n]\nseverity = { RD1207 = \"off\" }\n", "", "[gfx90a gfx1100] map[RD1207:off] [] "},
		{".rocmdoctor.toml", "severity.RD1207 = \"off\"\nglibc = \"\"\"2.28\"\"\"\n", "", "[] map[RD1207:off] [] 2.28"},
		{".rocmdoctor.toml", "[[ignore]]\nrules = [\n \"RD1001\",\n]\nsymbol = 'LLVMInitialize*'\n", "", "[] map[] [{[RD1001]  LLVMInitialize* }] "},
		{".rocmdoctor.yaml", "severity: {RD1207: \"off\"}\ngpu_targets: &t [gfx90a, gfx1100]\nignore:\n  - rules: [RD1001]\n    symbol: \"LLVMInitialize*\"\n", "", "[gfx90a gfx1100] map[RD1207:off] [{[RD1001]  LLVMInitialize* }] "},
		// docs/config.md's YAML: plain scalars stay strings ("2.30" keeps its
		// zero, off is no boolean).
		{".rocmdoctor.yaml", "glibc: 2.30\nseverity:\n  RD1207: off\nignore:\n  - rules: [RD1001]\n    path: \"lib/perl5/**\"\n", "", "[] map[RD1207:off] [{[RD1001] lib/perl5/**  }] 2.30"},
		{".rocmdoctor.toml", "glibc = \"2.28\"\n\nexpect_rpath = true\n", `line 3: unknown setting "expect_rpath"`, ""},
		{".rocmdoctor.toml", "[[ignore]]\nrules = [\"RD1001\"]\nsymbols = \"x\"\n", `line 3: unknown setting "ignore.symbols"`, ""},
		{".rocmdoctor.yaml", "glibc: \"2.28\"\nexpect_rpath: true\n", "line 2: field expect_rpath not found", ""},
		{".rocmdoctor.toml", "dlopen_strings = \"yes\"\n", "line 1:", ""},
		{".rocmdoctor.toml", "[severity]\nRD9999 = \"off\"\n", `line 2: [severity]: unknown rule "RD9999"`, ""},
		{".rocmdoctor.toml", "glibc = \n", "line 1:", ""},
	} {
		p := filepath.Join(dir, c.name)
		os.WriteFile(p, []byte(c.src), 0o644)
		var o Options
		_, err := LoadConfig(p, &o)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.src, err)
		case c.err == "":
			if o.Severity == nil {
				o.Severity = map[string]finding.Severity{}
			}
			if got := fmt.Sprintf("%v %v %v %s", append([]string{}, o.GPUTargets...), o.Severity, append([]Ignore{}, o.Ignores...), o.Glibc); got != c.want {
				t.Errorf("%q: read %q, want %q", c.src, got, c.want)
			}
		case err == nil || !strings.Contains(err.Error(), p+": ") || !strings.Contains(err.Error(), c.err):
			t.Errorf("%q: error %v, want %q naming the file", c.src, err, c.err)
		}
	}
}

// Any bytes as a TOML or YAML configuration: an error or a configuration,
// never a panic.
func FuzzLoadConfig(f *testing.F) {
	f.Add([]byte("glibc = \"2.28\"\n[severity]\nRD1207 = \"off\"\n[[ignore]]\nrules = [\"RD1001\"]\n"), false)
	f.Add([]byte("gpu_targets: [gfx90a]\nseverity: {RD1207: off}\nignore:\n  - path: \"x/**\"\n"), true)
	f.Fuzz(func(t *testing.T, b []byte, yaml bool) {
		name := ".rocmdoctor.toml"
		if yaml {
			name = ".rocmdoctor.yaml"
		}
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		var o Options
		LoadConfig(p, &o)
	})
}
