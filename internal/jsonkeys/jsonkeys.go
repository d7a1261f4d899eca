// Package jsonkeys reads the members of a JSON object once each. Decoders
// disagree on an object that holds a key twice: gjson (and any first-match
// path lookup) takes the first value, encoding/json and JavaScript's
// JSON.parse the last. Such an object says two things, so whatever decides
// something from it asks Each for the repeated key and refuses the object
// rather than pick one.
package jsonkeys

import "github.com/tidwall/gjson"

// Each calls each for every member of obj in order, with its key unescaped
// (JSON escapes such as \u005f are decoded, as every reader decodes them),
// and returns the first key obj holds twice, or "" when every key is
// distinct. It stops at the repeated key without calling each for it. A
// handful of keys is the rule, so they are compared in a slice until there
// are many.
func Each(obj gjson.Result, each func(k string, v gjson.Result)) (dup string) {
	var few []string
	var many map[string]struct{}
	obj.ForEach(func(k, v gjson.Result) bool {
		key := k.Str
		if many != nil {
			if _, ok := many[key]; ok {
				dup = key
				return false
			}
			many[key] = struct{}{}
		} else {
			for _, f := range few {
				if f == key {
					dup = key
					return false
				}
			}
			few = append(few, key)
			if len(few) > 16 {
				many = make(map[string]struct{}, 2*len(few))
				for _, f := range few {
					many[f] = struct{}{}
				}
			}
		}
		each(key, v)
		return true
	})
	return dup
}
