package evidence

import (
	"unsafe"

	"github.com/tidwall/gjson"
)

// ParseBody parses an RS body without copying it. gjson.ParseBytes copies
// the whole body into a string first, which for a 16 MiB page is one more
// full copy per call, twice per call when the preview and the ladder each
// parse it. The results (and the strings taken from them) share the body's
// memory, so the body must not be modified while they are in use; RS bodies
// never are.
func ParseBody(b []byte) gjson.Result {
	return gjson.Parse(unsafe.String(unsafe.SliceData(b), len(b)))
}
