package elfx

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// NotELFOrArchive is the error for a file that is neither an ELF file nor
// an ar archive, from its first bytes. A GNU ld script (glibc's libc.so,
// libm.so and libm.a are ones) is named as such, with the files it stands
// for, which are what a link or a check wants.
func NotELFOrArchive(path string, head []byte) error {
	if in, ok := LinkerScriptInputs(head); ok && len(in) > 0 {
		return fmt.Errorf("%s: %w but a GNU ld script standing for %s; give those files instead", path, ErrNotELF, strings.Join(in, ", "))
	}
	return fmt.Errorf("%s: %w and not an ar archive", path, ErrNotELF)
}

// LinkerScriptInputs returns the files a GNU ld script names in its
// INPUT and GROUP commands (AS_NEEDED lists included), read from its
// first bytes; ok is false when they are not text with such a command.
func LinkerScriptInputs(head []byte) (inputs []string, ok bool) {
	if bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(head) {
		return nil, false
	}
	s := string(head)
	// Comments out, parentheses and commas apart.
	var b strings.Builder
	for len(s) > 0 {
		if strings.HasPrefix(s, "/*") {
			end := strings.Index(s[2:], "*/")
			if end < 0 {
				break
			}
			s = s[end+4:]
			b.WriteByte(' ')
			continue
		}
		switch c := s[0]; c {
		case '(', ')', ',':
			b.WriteByte(' ')
			b.WriteByte(c)
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
		s = s[1:]
	}
	toks := strings.Fields(b.String())
	for i := 0; i+1 < len(toks); i++ {
		if (toks[i] != "GROUP" && toks[i] != "INPUT") || toks[i+1] != "(" {
			continue
		}
		ok = true
		depth := 0
		for i++; i < len(toks); i++ {
			switch t := toks[i]; t {
			case "(":
				depth++
			case ")":
				depth--
			case ",", "AS_NEEDED":
			default:
				inputs = append(inputs, t)
			}
			if depth == 0 {
				break
			}
		}
	}
	return inputs, ok
}
