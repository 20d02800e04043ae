// Package config reads .rocmdoctor.toml and .rocmdoctor.yaml: the subset of
// TOML a gate configuration needs — comments, `key = value` with strings,
// numbers, booleans and arrays of strings, `[table]` and
// `[[array-of-tables]]` — and the block-style YAML that says the same
// (ParseYAML), both into one Document.
package config

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// Value is a parsed TOML value: string, int64, float64, bool or []string.
type Value any

// Table is a TOML table.
type Table map[string]Value

// Document is a parsed file: the root table, named tables and arrays of
// tables.
type Document struct {
	Root   Table
	Tables map[string]Table
	Arrays map[string][]Table
}

// ParseError reports a syntax error with its line.
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Parse parses the TOML subset.
func Parse(src string) (*Document, error) {
	doc := &Document{Root: Table{}, Tables: map[string]Table{}, Arrays: map[string][]Table{}}
	cur := doc.Root
	sc := bufio.NewScanner(strings.NewReader(src))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(stripComment(sc.Text()))
		if s == "" {
			continue
		}
		switch {
		case strings.HasPrefix(s, "[["):
			if !strings.HasSuffix(s, "]]") {
				return nil, &ParseError{line, "unterminated [[table]] header"}
			}
			name := strings.TrimSpace(s[2 : len(s)-2])
			if name == "" {
				return nil, &ParseError{line, "empty table name"}
			}
			cur = Table{}
			doc.Arrays[name] = append(doc.Arrays[name], cur)
		case strings.HasPrefix(s, "["):
			if !strings.HasSuffix(s, "]") {
				return nil, &ParseError{line, "unterminated [table] header"}
			}
			name := strings.TrimSpace(s[1 : len(s)-1])
			if name == "" {
				return nil, &ParseError{line, "empty table name"}
			}
			if _, dup := doc.Tables[name]; dup {
				return nil, &ParseError{line, fmt.Sprintf("table [%s] defined twice", name)}
			}
			cur = Table{}
			doc.Tables[name] = cur
		default:
			k, v, ok := strings.Cut(s, "=")
			if !ok {
				return nil, &ParseError{line, fmt.Sprintf("expected key = value, got %q", s)}
			}
			key := strings.Trim(strings.TrimSpace(k), `"`)
			if key == "" {
				return nil, &ParseError{line, "empty key"}
			}
			val, err := parseValue(strings.TrimSpace(v))
			if err != nil {
				return nil, &ParseError{line, err.Error()}
			}
			if _, dup := cur[key]; dup {
				return nil, &ParseError{line, fmt.Sprintf("key %q set twice", key)}
			}
			cur[key] = val
		}
	}
	return doc, sc.Err()
}

// stripComment removes a # comment that is not inside a string.
func stripComment(s string) string {
	in := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in != 0 && c == '\\' && in == '"':
			i++
		case in != 0 && c == in:
			in = 0
		case in == 0 && (c == '"' || c == '\''):
			in = c
		case in == 0 && c == '#':
			return s[:i]
		}
	}
	return s
}

func parseValue(s string) (Value, error) {
	switch {
	case s == "":
		return nil, fmt.Errorf("missing value")
	case s == "true":
		return true, nil
	case s == "false":
		return false, nil
	case strings.HasPrefix(s, `"`):
		v, err := strconv.Unquote(s)
		if err != nil {
			return nil, fmt.Errorf("bad string %s", s)
		}
		return v, nil
	case strings.HasPrefix(s, "'"):
		if len(s) < 2 || !strings.HasSuffix(s, "'") {
			return nil, fmt.Errorf("bad literal string %s", s)
		}
		return s[1 : len(s)-1], nil
	case strings.HasPrefix(s, "["):
		return stringArray(s, parseValue)
	}
	if i, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64); err == nil {
		return i, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f, nil
	}
	return nil, fmt.Errorf("unsupported value %s (strings need quotes)", s)
}

// stringArray reads a one-line [a, b] array whose elements elem parses to
// strings (TOML arrays and YAML flow sequences).
func stringArray(s string, elem func(string) (Value, error)) (Value, error) {
	if !strings.HasSuffix(s, "]") {
		return nil, fmt.Errorf("arrays must be on one line: %s", s)
	}
	out := []string{}
	for _, part := range splitArray(s[1 : len(s)-1]) {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		v, err := elem(part)
		if err != nil {
			return nil, err
		}
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("only arrays of strings are supported: %s", s)
		}
		out = append(out, str)
	}
	return out, nil
}

// splitArray splits at commas outside quotes.
func splitArray(s string) []string {
	var out []string
	in := byte(0)
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in == '"' && c == '\\':
			i++
		case in != 0 && c == in:
			in = 0
		case in == 0 && (c == '"' || c == '\''):
			in = c
		case in == 0 && c == ',':
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// String returns t[key] as a string.
func (t Table) String(key string) (string, bool, error) {
	v, ok := t[key]
	if !ok {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", true, fmt.Errorf("%s must be a string", key)
	}
	return s, true, nil
}

// Bool returns t[key] as a bool.
func (t Table) Bool(key string) (bool, bool, error) {
	v, ok := t[key]
	if !ok {
		return false, false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, true, fmt.Errorf("%s must be true or false", key)
	}
	return b, true, nil
}
