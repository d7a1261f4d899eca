package rs

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ParsePath inverts Path: it splits an escaped request path into its
// unescaped segments, so ParsePath(Path(s...)) returns s for any segments
// that are not empty.
func ParsePath(p string) ([]string, error) {
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("rs: path %q does not start with /", p)
	}
	parts := strings.Split(p[1:], "/")
	out := make([]string, len(parts))
	for i, s := range parts {
		if s == "" {
			return nil, errors.New("rs: path has an empty segment")
		}
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, fmt.Errorf("rs: path segment %d: %w", i+1, err)
		}
		out[i] = u
	}
	return out, nil
}

// Route is a read route of the RS API, identified by its template.
type Route int

// The routes the tools read. RouteOther is any other path.
const (
	RouteOther Route = iota
	RouteSchema
	RouteStreams
	RouteStream
	RouteRecords
	RouteRecord
	RouteFieldWindow
	RouteAggregate
	RouteSearch
	RouteSearchSemantic
	RouteSearchHybrid
	RouteBlob
)

var routeTemplates = [...]string{
	RouteOther:          "other",
	RouteSchema:         "/v1/schema",
	RouteStreams:        "/v1/streams",
	RouteStream:         "/v1/streams/{stream}",
	RouteRecords:        "/v1/streams/{stream}/records",
	RouteRecord:         "/v1/streams/{stream}/records/{id}",
	RouteFieldWindow:    "/v1/streams/{stream}/records/{id}/field-window",
	RouteAggregate:      "/v1/streams/{stream}/aggregate",
	RouteSearch:         "/v1/search",
	RouteSearchSemantic: "/v1/search/semantic",
	RouteSearchHybrid:   "/v1/search/hybrid",
	RouteBlob:           "/v1/blobs/{blob_id}",
}

// String is the route's template; it names no stream or record and is safe
// to log.
func (r Route) String() string {
	if r < 0 || int(r) >= len(routeTemplates) {
		return routeTemplates[RouteOther]
	}
	return routeTemplates[r]
}

// RouteOf identifies the route of an escaped request path (as built by Path).
// Only the fixed segments decide; stream names and record ids may be
// anything.
func RouteOf(p string) Route {
	seg, err := ParsePath(p)
	if err != nil || len(seg) < 2 || seg[0] != "v1" {
		return RouteOther
	}
	switch seg[1] {
	case "schema":
		if len(seg) == 2 {
			return RouteSchema
		}
	case "blobs":
		if len(seg) == 3 {
			return RouteBlob
		}
	case "search":
		switch {
		case len(seg) == 2:
			return RouteSearch
		case len(seg) == 3 && seg[2] == "semantic":
			return RouteSearchSemantic
		case len(seg) == 3 && seg[2] == "hybrid":
			return RouteSearchHybrid
		}
	case "streams":
		switch {
		case len(seg) == 2:
			return RouteStreams
		case len(seg) == 3:
			return RouteStream
		case len(seg) == 4 && seg[3] == "records":
			return RouteRecords
		case len(seg) == 4 && seg[3] == "aggregate":
			return RouteAggregate
		case len(seg) == 5 && seg[3] == "records":
			return RouteRecord
		case len(seg) == 6 && seg[3] == "records" && seg[5] == "field-window":
			return RouteFieldWindow
		}
	}
	return RouteOther
}

// listEnvelope reports whether the route answers {object:"list", data:[…]}.
func (r Route) listEnvelope() bool {
	switch r {
	case RouteStreams, RouteRecords, RouteSearch, RouteSearchSemantic, RouteSearchHybrid:
		return true
	}
	return false
}

// search reports whether the route is one of the three search routes.
func (r Route) search() bool {
	return r == RouteSearch || r == RouteSearchSemantic || r == RouteSearchHybrid
}
