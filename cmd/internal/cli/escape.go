package cli

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// ownColors are the escape sequences Colors writes; every other control
// character in a name read from a file (a SONAME, a RUNPATH, a wheel
// member) is shown escaped, so a hostile file cannot move the cursor,
// rewrite the terminal's title or fake a line of the report.
var ownColors = []string{"\x1b[0m", "\x1b[1m", "\x1b[2m", "\x1b[31m", "\x1b[32m", "\x1b[33m"}

// Escape shows the control characters (C0, DEL, C1) and invalid UTF-8 of
// s as Go escapes (\n, \x1b, \u0085, \xff), leaving rocmdoctor's own
// colours; s is returned as it is when it has none.
func Escape(s string) string { return escape(s, false) }

// EscapeMessage is Escape for a message of several lines: newlines and
// tabs are kept.
func EscapeMessage(s string) string { return escape(s, true) }

func escape(s string, lines bool) string {
	if clean(s, lines) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			if c := ownColor(s[i:]); c != "" {
				b.WriteString(c)
				i += len(c)
				continue
			}
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case lines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func ownColor(s string) string {
	for _, c := range ownColors {
		if strings.HasPrefix(s, c) {
			return c
		}
	}
	return ""
}

// clean reports whether s needs no escaping (the common case, checked
// without allocating).
func clean(s string, lines bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == 0x1b, c == 0x7f:
			return false
		case c < 0x20 && !(lines && (c == '\n' || c == '\t')):
			return false
		case c >= 0x80:
			return utf8.ValidString(s[i:]) && !hasC1(s[i:])
		}
	}
	return true
}

func hasC1(s string) bool {
	for _, r := range s {
		if r >= 0x80 && r < 0xa0 || r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

// Line writes the parts, each escaped as Printf escapes its string
// arguments, then a newline: Printf without fmt, for lines printed by the
// thousand (a tree of every library of a prefix). Every part is escaped,
// so a tab or newline in one is printed as \t or \n.
func Line(w io.Writer, parts ...string) {
	for _, p := range parts {
		io.WriteString(w, Escape(p))
	}
	io.WriteString(w, "\n")
}

// Printf is fmt.Fprintf with every string argument escaped (Escape): for
// report lines whose arguments are names read from files.
func Printf(w io.Writer, format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = Escape(s)
		}
	}
	fmt.Fprintf(w, format, args...)
}
