package config

import (
	"reflect"
	"testing"
)

// The YAML spelling of TestParse's document must give the same Document.
func TestParseYAMLMatchesTOML(t *testing.T) {
	y, err := ParseYAML(`---
# gate settings
glibc: 2.28      # baseline, stays a string
glibcxx: "3.4.30"
expect_runpath: true
extra:
  - /opt/rocm/lib
  - "/opt/rocm/llvm/lib"

severity:
  RD1207: off
  "textrel": 'note'

ignore:
  - rule: RD1001
    symbol: "LLVMInitialize*"  # a comment with "quotes"
  -   path: "**/libcuda*.so*"
      rules: [RD1004, "missing-library"]
`)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := Parse(`
glibc = "2.28"
glibcxx = "3.4.30"
expect_runpath = true
extra = ["/opt/rocm/lib", "/opt/rocm/llvm/lib"]
[severity]
RD1207 = "off"
textrel = "note"
[[ignore]]
rule = "RD1001"
symbol = "LLVMInitialize*"
[[ignore]]
path = "**/libcuda*.so*"
rules = ["RD1004", "missing-library"]
`)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(y, tm) {
		t.Errorf("YAML and TOML differ:\nyaml %#v\ntoml %#v", y, tm)
	}
}

func TestParseYAMLErrors(t *testing.T) {
	for _, src := range []string{
		"a:", "a: 1\na: 2", "\tb: 1", " a: 1", "a: &x 1", "a: *x", "a: {b: 1}", "a: |", "a:\n  b:\n    c: 1",
		"a:\n  - x\n  - k: v", "a:\n  - k: v\n  - x", "a:\n  - k: v\n   j: w", "a: [x, {b: 1}]", "---\na: 1\n---\nb: 2",
		"just text", "a: [x", "a:\n  - k: [x\n", ": 1",
	} {
		if _, err := ParseYAML(src); err == nil {
			t.Errorf("ParseYAML(%q) succeeded", src)
		} else if _, ok := err.(*ParseError); !ok {
			t.Errorf("ParseYAML(%q) error %T", src, err)
		}
	}
}

func FuzzParseYAML(f *testing.F) {
	f.Add("a: b\nt:\n  x: [1, '2']\nu:\n  - y: true # c\n    z: \"q\"\n")
	f.Fuzz(func(t *testing.T, s string) { ParseYAML(s) })
}
