package outbound

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyOutboundBuildsClients scans the module's production code for any
// other way to get an HTTP client: an http.Client value built in place,
// new(http.Client), http.DefaultClient, or the package-level helpers
// (http.Get, Head, Post, PostForm) that use it, or a zero http.Client
// variable. Each of those follows
// redirects. scripts/ (drivers run by people against servers they start)
// and nested modules are not part of any shipped process.
func TestOnlyOutboundBuildsClients(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	self, _ := filepath.Abs(".")
	var bad []string
	scanned := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			switch {
			case path == root:
				return nil
			case path == self, name == "testdata", name == "scripts" && filepath.Dir(path) == root,
				strings.HasPrefix(name, "."), strings.HasPrefix(name, "_"):
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		scanned++
		rel, _ := filepath.Rel(root, path)
		for _, f := range clientUses(t, path) {
			bad = append(bad, rel+":"+f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 50 {
		t.Fatalf("scanned only %d files under %s; the walk is broken", scanned, root)
	}
	for _, b := range bad {
		t.Errorf("%s: use outbound.New or outbound.Wrap, which never follow a redirect", b)
	}
}

// TestScannerFindsEachForm keeps the scanner honest: every form it must
// catch is caught, under any import name.
func TestScannerFindsEachForm(t *testing.T) {
	src := `package p
import (
	"net/http"
	nh "net/http"
)
var a = &http.Client{}
var b = http.Client{Timeout: 1}
var c = new(nh.Client)
var d = http.DefaultClient
func e() { http.Get("x"); nh.Post("x", "", nil); http.Head("x"); http.PostForm("x", nil) }
var f = []*http.Client{{}}
var g http.Client
var ok = http.Header{}
var ok2 *http.Client
`
	dir := t.TempDir()
	p := filepath.Join(dir, "p.go")
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got := clientUses(t, p)
	if len(got) != 10 {
		t.Errorf("found %d uses, want 10: %q", len(got), got)
	}
}

// clientUses lists the forbidden uses in one file as "line: what".
func clientUses(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	names := map[string]bool{}
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == "net/http" {
			name := "http"
			if im.Name != nil {
				name = im.Name.Name
			}
			names[name] = true
		}
	}
	if len(names) == 0 {
		return nil
	}
	isHTTP := func(e ast.Expr, sel ...string) (string, bool) {
		s, ok := e.(*ast.SelectorExpr)
		if !ok {
			return "", false
		}
		id, ok := s.X.(*ast.Ident)
		if !ok || !names[id.Name] {
			return "", false
		}
		for _, want := range sel {
			if s.Sel.Name == want {
				return want, true
			}
		}
		return "", false
	}
	var out []string
	at := func(n ast.Node, what string) {
		out = append(out, strconv.Itoa(fset.Position(n.Pos()).Line)+": "+what)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			if _, ok := isHTTP(n.Type, "Client"); ok {
				at(n, "http.Client literal")
			}
			if n.Type == nil {
				// An element of a []*http.Client{{…}} literal: its
				// type is elided.
				break
			}
			if at2, ok := n.Type.(*ast.ArrayType); ok {
				elt := at2.Elt
				if st, ok := elt.(*ast.StarExpr); ok {
					elt = st.X
				}
				if _, ok := isHTTP(elt, "Client"); ok {
					for _, e := range n.Elts {
						if cl, ok := e.(*ast.CompositeLit); ok && cl.Type == nil {
							at(cl, "http.Client literal")
						}
					}
				}
			}
		case *ast.ValueSpec:
			if _, ok := isHTTP(n.Type, "Client"); ok {
				at(n, "zero http.Client")
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "new" && len(n.Args) == 1 {
				if _, ok := isHTTP(n.Args[0], "Client"); ok {
					at(n, "new(http.Client)")
				}
			}
			if name, ok := isHTTP(n.Fun, "Get", "Head", "Post", "PostForm"); ok {
				at(n, "http."+name)
			}
		case *ast.SelectorExpr:
			if _, ok := isHTTP(n, "DefaultClient"); ok {
				at(n, "http.DefaultClient")
			}
		}
		return true
	})
	return out
}
