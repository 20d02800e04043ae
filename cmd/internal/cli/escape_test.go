package cli

import (
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want, msg string }{
		{"libfoo.so.1", "libfoo.so.1", "libfoo.so.1"},
		{"lib\x1b]0;owned\x07.so", `lib\x1b]0;owned\x07.so`, `lib\x1b]0;owned\x07.so`},
		{"a\nRD1001\terror", `a\nRD1001\terror`, "a\nRD1001\terror"},
		{"cr\rx", `cr\rx`, `cr\rx`},
		{"del\x7f c1\u0085 bad\xff", `del\x7f c1\u0085 bad\xff`, `del\x7f c1\u0085 bad\xff`},
		{"\x1b[31mnot found\x1b[0m", "\x1b[31mnot found\x1b[0m", "\x1b[31mnot found\x1b[0m"},
		{"\x1b[8mhidden", `\x1b[8mhidden`, `\x1b[8mhidden`},
		{"ünïcødé → ok", "ünïcødé → ok", "ünïcødé → ok"},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := EscapeMessage(c.in); got != c.msg {
			t.Errorf("EscapeMessage(%q) = %q, want %q", c.in, got, c.msg)
		}
	}
}

// Line prints what Printf prints with every part a %s argument.
func TestLineIsPrintf(t *testing.T) {
	parts := []string{"│   ", "├── ", "lib\x1b]0;owned\x07.so", " => ", "/x/a\nb", " ", "\x1b[2m[ld.so.cache]\x1b[0m"}
	var line, printf strings.Builder
	Line(&line, parts...)
	args := make([]any, len(parts))
	for i, p := range parts {
		args[i] = p
	}
	Printf(&printf, strings.Repeat("%s", len(parts))+"\n", args...)
	if line.String() != printf.String() {
		t.Errorf("Line wrote %q, Printf %q", line.String(), printf.String())
	}
	if want := "│   ├── lib\\x1b]0;owned\\x07.so => /x/a\\nb \x1b[2m[ld.so.cache]\x1b[0m\n"; line.String() != want {
		t.Errorf("Line wrote %q, want %q", line.String(), want)
	}
}
