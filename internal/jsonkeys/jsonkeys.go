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
// and reports the first key obj holds twice: repeated is true and dup is
// that key (which may be ""). It stops there, without calling each for the
// second occurrence. Anything but an object has no members: each is not
// called and nothing is repeated. Only obj's own members are compared, not
// those of objects nested in it.
func Each(obj gjson.Result, each func(k string, v gjson.Result)) (dup string, repeated bool) {
	if !obj.IsObject() {
		return "", false
	}
	// A handful of keys is the rule, so they are compared in a slice until
	// there are many.
	var few []string
	var many map[string]struct{}
	obj.ForEach(func(k, v gjson.Result) bool {
		key := k.Str
		if many != nil {
			if _, ok := many[key]; ok {
				dup, repeated = key, true
				return false
			}
			many[key] = struct{}{}
		} else {
			for _, f := range few {
				if f == key {
					dup, repeated = key, true
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
		if each != nil {
			each(key, v)
		}
		return true
	})
	return dup, repeated
}
