package config

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	doc, err := Parse(`
# gate settings
glibc = "2.28"      # baseline
expect_runpath = true
workers = 4

[severity]
RD1207 = "off"
"textrel" = 'note'

[[ignore]]
rule = "RD1001"
symbol = "LLVMInitialize*"  # a comment with "quotes"

[[ignore]]
path = "**/libcuda*.so*"
rules = ["RD1004", "missing-library"]
`)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Root["glibc"] != "2.28" || doc.Root["expect_runpath"] != true || doc.Root["workers"] != int64(4) {
		t.Errorf("root = %v", doc.Root)
	}
	if doc.Tables["severity"]["RD1207"] != "off" || doc.Tables["severity"]["textrel"] != "note" {
		t.Errorf("severity = %v", doc.Tables["severity"])
	}
	ign := doc.Arrays["ignore"]
	if len(ign) != 2 || ign[0]["symbol"] != "LLVMInitialize*" || !reflect.DeepEqual(ign[1]["rules"], []string{"RD1004", "missing-library"}) {
		t.Errorf("ignore = %v", ign)
	}
}

func TestParseErrors(t *testing.T) {
	for _, src := range []string{
		"a = ", "[x", "[[x]", "a = b", "a = [1, 2]", "a = \"x\"\na = \"y\"", "[t]\n[t]", "= 3", "a = [\"x\"",
	} {
		if _, err := Parse(src); err == nil {
			t.Errorf("Parse(%q) succeeded", src)
		} else if _, ok := err.(*ParseError); !ok {
			t.Errorf("Parse(%q) error %T", src, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("a = \"b\"\n[t]\nx = [\"1\", '2']\n[[u]]\ny = true # c")
	f.Fuzz(func(t *testing.T, s string) { Parse(s) })
}
