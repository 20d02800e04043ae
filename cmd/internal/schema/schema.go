// Package schema derives JSON Schema (draft 2020-12) documents from the Go
// types that the commands encode with --json, so that the published
// schemas (docs/schema, written by cmd/gendocs) describe exactly what is
// written: encoding/json's rules for field names, omitempty, embedded
// structs, nil slices and maps (null) and pointers.
package schema

import (
	"encoding"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
)

// Of returns the schema of v's type, titled title, its named struct types
// in $defs.
func Of(title string, v any) map[string]any {
	g := &gen{defs: map[string]any{}}
	root := g.schema(reflect.TypeOf(v))
	out := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"title":   title,
	}
	for k, v := range root {
		out[k] = v
	}
	if len(g.defs) > 0 {
		out["$defs"] = g.defs
	}
	return out
}

// Marshal is Of as indented JSON with a final newline.
func Marshal(title string, v any) ([]byte, error) {
	b, err := json.MarshalIndent(Of(title, v), "", "  ")
	return append(b, '\n'), err
}

type gen struct {
	defs map[string]any
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

func (g *gen) schema(t reflect.Type) map[string]any {
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) {
		return map[string]any{} // its own encoding: anything
	}
	if t.Implements(textMarshaler) {
		return map[string]any{"type": "string"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(g.schema(t.Elem()))
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": []string{"string", "null"}} // base64
		}
		return map[string]any{"type": []string{"array", "null"}, "items": g.schema(t.Elem())}
	case reflect.Array:
		return map[string]any{"type": "array", "items": g.schema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": []string{"object", "null"}, "additionalProperties": g.schema(t.Elem())}
	case reflect.Struct:
		if t.Name() == "" {
			return g.object(t)
		}
		name := strings.ReplaceAll(t.String(), ".", "_")
		if _, ok := g.defs[name]; !ok {
			g.defs[name] = nil // (recursive types refer to it while it is built)
			g.defs[name] = g.object(t)
		}
		return map[string]any{"$ref": "#/$defs/" + name}
	}
	return map[string]any{} // interfaces: anything
}

// object is a struct's schema as encoding/json writes it: embedded structs'
// fields promoted, "-" left out, omitempty fields not required.
func (g *gen) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := f.Type
			if f.Anonymous && name == "" {
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			s := g.schema(ft)
			if strings.Contains(","+opts+",", ",string,") {
				s = map[string]any{"type": "string"}
			}
			props[name] = s
			if !strings.Contains(","+opts+",", ",omitempty,") {
				required = append(required, name)
			}
		}
	}
	walk(t)
	sort.Strings(required)
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

func nullable(s map[string]any) map[string]any {
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}
