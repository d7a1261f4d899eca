package main

import (
	"fmt"
	"reflect"
	"strings"
)

// deprecatedFields lists the set fields goreleaser marks deprecated (its
// jsonschema tag), by YAML path: goreleaser check fails on them too.
func deprecatedFields(v any) []string {
	var out []string
	walkDeprecated(reflect.ValueOf(v), "", &out)
	return out
}

func walkDeprecated(v reflect.Value, path string, out *[]string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkDeprecated(v.Elem(), path, out)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "-" {
				continue
			}
			p := path
			if name != "" {
				p = joinPath(path, name)
			}
			fv := v.Field(i)
			if strings.Contains(f.Tag.Get("jsonschema"), "deprecated=true") && !fv.IsZero() {
				*out = append(*out, p)
			}
			walkDeprecated(fv, p, out)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkDeprecated(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			walkDeprecated(v.MapIndex(k), joinPath(path, fmt.Sprint(k.Interface())), out)
		}
	}
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
