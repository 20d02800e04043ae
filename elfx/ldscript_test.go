package elfx_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rocmdoctor/rocmdoctor/elfx"
)

func TestLinkerScriptInputs(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
		ok   bool
	}{
		// glibc's libc.so and libm.a, as Debian ships them.
		{"/* GNU ld script\n   Use the shared library, but some functions are only in\n   the static library, so try that secondarily.  */\nOUTPUT_FORMAT(elf64-x86-64)\nGROUP ( /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libc_nonshared.a  AS_NEEDED ( /lib64/ld-linux-x86-64.so.2 ) )\n",
			[]string{"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc_nonshared.a", "/lib64/ld-linux-x86-64.so.2"}, true},
		{"/* GNU ld script\n*/\nOUTPUT_FORMAT(elf64-x86-64)\nGROUP ( /usr/lib/x86_64-linux-gnu/libm-2.36.a /usr/lib/x86_64-linux-gnu/libmvec.a )\n",
			[]string{"/usr/lib/x86_64-linux-gnu/libm-2.36.a", "/usr/lib/x86_64-linux-gnu/libmvec.a"}, true},
		// Commas, -l names, two commands, no spaces around parentheses.
		{"INPUT(libfoo.so.1,-lbar) GROUP(libbaz.a AS_NEEDED(libqux.so.2))", []string{"libfoo.so.1", "-lbar", "libbaz.a", "libqux.so.2"}, true},
		{"int main(void) { return 0; }\n", nil, false},
		{"GROUP without a list", nil, false},
		{"\x7fELF\x02\x01\x01\x00GROUP ( a )", nil, false},
	} {
		got, ok := elfx.LinkerScriptInputs([]byte(c.text))
		if ok != c.ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %q, %v; want %q, %v", c.text, got, ok, c.want, c.ok)
		}
	}
	err := elfx.NotELFOrArchive("libm.so", []byte("GROUP ( /lib/libm.so.6 )"))
	if !errors.Is(err, elfx.ErrNotELF) || !strings.Contains(err.Error(), "libm.so: not an ELF file but a GNU ld script standing for /lib/libm.so.6; give those files instead") {
		t.Errorf("script: %v", err)
	}
	err = elfx.NotELFOrArchive("foo.c", []byte("int x;"))
	if !errors.Is(err, elfx.ErrNotELF) || err.Error() != "foo.c: not an ELF file and not an ar archive" {
		t.Errorf("text: %v", err)
	}
}

// FuzzLinkerScriptInputs: any bytes give an answer without panicking, and
// what comes back are file names: no blanks, parentheses or commas, and
// nothing at all from bytes that are not text.
func FuzzLinkerScriptInputs(f *testing.F) {
	for _, s := range []string{
		"/* GNU ld script */\nOUTPUT_FORMAT(elf64-x86-64)\nGROUP ( /lib/libc.so.6 /usr/lib/libc_nonshared.a AS_NEEDED ( /lib64/ld-linux-x86-64.so.2 ) )\n",
		"INPUT(libfoo.so.1,-lbar) GROUP(libbaz.a AS_NEEDED(libqux.so.2))",
		"GROUP ( a ( b ) ) ) INPUT (",
		"/* unterminated GROUP ( a )",
		"\x7fELF GROUP ( a )",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in, ok := elfx.LinkerScriptInputs(b)
		if !ok && len(in) > 0 {
			t.Fatalf("inputs %q without a command", in)
		}
		if ok && (bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b)) {
			t.Fatalf("binary input taken for a script: %q", in)
		}
		for _, s := range in {
			if s == "" || strings.ContainsAny(s, "(), \t\n\r\v\f") {
				t.Fatalf("input %q is not a file name", s)
			}
		}
		err := elfx.NotELFOrArchive("x", b)
		if !errors.Is(err, elfx.ErrNotELF) || !strings.HasPrefix(err.Error(), "x: ") {
			t.Fatalf("NotELFOrArchive: %v", err)
		}
	})
}
