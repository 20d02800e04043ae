package config

import (
	"bufio"
	"fmt"
	"strings"
)

// ParseYAML parses the block-style YAML subset a .rocmdoctor.yaml needs
// into the same Document as [Parse]:
//
//	glibc: 2.28              # root scalars (Document.Root)
//	severity:                # a mapping of scalars (Document.Tables)
//	  RD1207: off
//	ignore:                  # a sequence of mappings (Document.Arrays)
//	  - rules: [RD1001]
//	    symbol: "LLVMInitialize*"
//	  - path: "**/libcuda*.so*"
//	extra_dirs:              # a sequence of scalars (a []string in Root)
//	  - /opt/rocm/lib
//
// Scalars are strings except true and false: plain 2.28 and 2.30 stay the
// strings "2.28" and "2.30" (YAML would make them floats and lose the zero),
// and off stays "off" (YAML 1.2, not 1.1's boolean). Flow sequences of
// scalars ([a, "b"]) are []string. Anchors, aliases, tags, multi-line
// scalars, flow mappings and deeper nesting are errors that name the line.
func ParseYAML(src string) (*Document, error) {
	doc := &Document{Root: Table{}, Tables: map[string]Table{}, Arrays: map[string][]Table{}}
	type line struct {
		n      int
		indent int
		text   string
	}
	var lines []line
	sc := bufio.NewScanner(strings.NewReader(src))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		raw := sc.Text()
		body := strings.TrimLeft(raw, " ")
		if strings.HasPrefix(body, "\t") {
			return nil, &ParseError{n, "tabs are not allowed in YAML indentation"}
		}
		text := strings.TrimSpace(stripYAMLComment(body))
		if text == "" || (len(lines) == 0 && text == "---") {
			continue
		}
		if text == "---" || text == "..." {
			return nil, &ParseError{n, "only one YAML document is supported"}
		}
		lines = append(lines, line{n, len(raw) - len(body), text})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for i := 0; i < len(lines); {
		l := lines[i]
		if l.indent != 0 {
			return nil, &ParseError{l.n, "unexpected indentation"}
		}
		key, val, err := yamlKey(l.text)
		if err != nil {
			return nil, &ParseError{l.n, err.Error()}
		}
		if _, dup := doc.Root[key]; dup || doc.Tables[key] != nil || doc.Arrays[key] != nil {
			return nil, &ParseError{l.n, fmt.Sprintf("key %q set twice", key)}
		}
		i++
		if val != "" {
			v, err := yamlScalar(val)
			if err != nil {
				return nil, &ParseError{l.n, err.Error()}
			}
			doc.Root[key] = v
			continue
		}
		// A block: the following lines indented deeper.
		j := i
		for j < len(lines) && lines[j].indent > 0 {
			j++
		}
		block := lines[i:j]
		i = j
		if len(block) == 0 {
			return nil, &ParseError{l.n, fmt.Sprintf("%s has no value", key)}
		}
		ind := block[0].indent
		if !strings.HasPrefix(block[0].text, "- ") && block[0].text != "-" {
			// A mapping of scalars.
			t := Table{}
			for _, b := range block {
				if b.indent != ind {
					return nil, &ParseError{b.n, "nesting deeper than one mapping is not supported"}
				}
				k, v, err := yamlKey(b.text)
				if err == nil && v == "" {
					err = fmt.Errorf("%s.%s has no value", key, k)
				}
				var sv Value
				if err == nil {
					sv, err = yamlScalar(v)
				}
				if err != nil {
					return nil, &ParseError{b.n, err.Error()}
				}
				if _, dup := t[k]; dup {
					return nil, &ParseError{b.n, fmt.Sprintf("key %q set twice", k)}
				}
				t[k] = sv
			}
			doc.Tables[key] = t
			continue
		}
		// A sequence: of scalars, or of mappings whose further keys are
		// indented to the first key after "- ".
		var scalars []string
		var maps []Table
		var cur Table
		keyIndent := -1
		for _, b := range block {
			text := b.text
			if b.indent == ind && (strings.HasPrefix(text, "- ") || text == "-") {
				item := strings.TrimSpace(strings.TrimPrefix(text, "-"))
				if item == "" {
					return nil, &ParseError{b.n, "empty sequence item"}
				}
				if k, v, err := yamlKey(item); err == nil {
					if scalars != nil {
						return nil, &ParseError{b.n, "a sequence mixes scalars and mappings"}
					}
					cur = Table{}
					maps = append(maps, cur)
					keyIndent = ind + len(text) - len(strings.TrimLeft(text[1:], " "))
					if err := setYAML(cur, k, v); err != nil {
						return nil, &ParseError{b.n, err.Error()}
					}
					continue
				}
				if maps != nil {
					return nil, &ParseError{b.n, "a sequence mixes scalars and mappings"}
				}
				v, err := yamlScalar(item)
				if err != nil {
					return nil, &ParseError{b.n, err.Error()}
				}
				s, ok := v.(string)
				if !ok {
					return nil, &ParseError{b.n, "only sequences of strings or of mappings are supported"}
				}
				scalars = append(scalars, s)
				continue
			}
			if cur == nil || b.indent != keyIndent {
				return nil, &ParseError{b.n, "bad indentation in a sequence"}
			}
			k, v, err := yamlKey(text)
			if err == nil {
				err = setYAML(cur, k, v)
			}
			if err != nil {
				return nil, &ParseError{b.n, err.Error()}
			}
		}
		if maps != nil {
			doc.Arrays[key] = maps
		} else {
			doc.Root[key] = scalars
		}
	}
	return doc, nil
}

func setYAML(t Table, k, v string) error {
	if v == "" {
		return fmt.Errorf("%s has no value (nesting is not supported)", k)
	}
	if _, dup := t[k]; dup {
		return fmt.Errorf("key %q set twice", k)
	}
	sv, err := yamlScalar(v)
	if err != nil {
		return err
	}
	t[k] = sv
	return nil
}

// yamlKey splits "key: value" (value may be empty); keys may be quoted.
func yamlKey(s string) (key, val string, err error) {
	if strings.HasPrefix(s, `"`) || strings.HasPrefix(s, "'") {
		q := s[0]
		end := strings.IndexByte(s[1:], q)
		if end < 0 {
			return "", "", fmt.Errorf("unterminated quoted key")
		}
		key, rest := s[1:1+end], s[2+end:]
		if !strings.HasPrefix(rest, ":") {
			return "", "", fmt.Errorf("expected key: value, got %q", s)
		}
		return key, strings.TrimSpace(rest[1:]), nil
	}
	i := strings.Index(s, ": ")
	if i < 0 {
		if !strings.HasSuffix(s, ":") {
			return "", "", fmt.Errorf("expected key: value, got %q", s)
		}
		i = len(s) - 1
	}
	key = strings.TrimSpace(s[:i])
	if key == "" || strings.ContainsAny(key[:1], "[{&*!|>%@`-") {
		return "", "", fmt.Errorf("unsupported key %q", key)
	}
	return key, strings.TrimSpace(s[i+1:]), nil
}

// yamlScalar reads a scalar or a one-line flow sequence of scalars.
func yamlScalar(s string) (Value, error) {
	switch {
	case s == "true":
		return true, nil
	case s == "false":
		return false, nil
	case strings.HasPrefix(s, `"`), strings.HasPrefix(s, "'"):
		return parseValue(s)
	case strings.HasPrefix(s, "["):
		return stringArray(s, yamlScalar)
	case strings.ContainsAny(s[:1], "{&*!|>%@`"):
		return nil, fmt.Errorf("unsupported YAML value %s (flow mappings, anchors, aliases, tags and block scalars are not supported; quote it)", s)
	}
	return s, nil
}

// stripYAMLComment removes a comment: a # at the start or after a space,
// outside quotes.
func stripYAMLComment(s string) string {
	in := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in == '"' && c == '\\':
			i++
		case in != 0 && c == in:
			in = 0
		case in == 0 && (c == '"' || c == '\'') && (i == 0 || strings.ContainsRune(" :[,-", rune(s[i-1]))):
			in = c
		case in == 0 && c == '#' && (i == 0 || s[i-1] == ' '):
			return s[:i]
		}
	}
	return s
}
