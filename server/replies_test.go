package server

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// replyCodes are the codes an error reply starts with.
var replyCodes = []string{"ERR ", "WRONGTYPE ", "EXECABORT ", "NOAUTH ", "WRONGPASS ", "NOPROTO ", "LOADING ", "CROSSSLOT "}

// packageFiles parses the package's files that are not tests.
func packageFiles(t *testing.T) map[string]*ast.File {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = f
	}
	return files
}

// stringLits calls f with every string literal of file (import paths
// aside) and its offset.
func stringLits(file *ast.File, f func(s string, pos token.Pos)) {
	ast.Inspect(file, func(n ast.Node) bool {
		if _, ok := n.(*ast.ImportSpec); ok {
			return false
		}
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				f(s, lit.Pos())
			}
		}
		return true
	})
}

// TestRepliesLiveInRepliesGo (S3): no file of the package but replies.go
// spells an error reply, so each text exists once.
func TestRepliesLiveInRepliesGo(t *testing.T) {
	for name, file := range packageFiles(t) {
		if name == "replies.go" {
			continue
		}
		stringLits(file, func(s string, _ token.Pos) {
			for _, code := range replyCodes {
				if strings.HasPrefix(s, code) {
					t.Errorf("%s spells the reply %q: it belongs in replies.go", name, s)
				}
			}
		})
	}
}

// TestRepliesAreRedisTexts (S3): every text replies.go gives as
// redis-server's (the strings before "redis-server 7.2's") is in the
// installed redis-server 7.0 binary, its error code aside, so a reply that
// redis-server has is its text byte for byte; a text built around a part
// of the request is checked piece by piece.
func TestRepliesAreRedisTexts(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		skipOrFail(t, "redis-server is not installed (apt-get install redis-server): no binary to read its replies from")
	}
	image, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("replies.go")
	if err != nil {
		t.Fatal(err)
	}
	own := bytes.Index(src, []byte("// redis-server 7.2's replies"))
	if own < 0 {
		t.Fatal(`replies.go has no "redis-server 7.2's replies" section`)
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "replies.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	stringLits(file, func(s string, pos token.Pos) {
		if fset.Position(pos).Offset > own {
			return
		}
		for _, code := range replyCodes {
			s = strings.TrimPrefix(s, code)
		}
		if s == "" {
			return
		}
		checked++
		if !bytes.Contains(image, []byte(s)) {
			t.Errorf("%q is not in %s", s, bin)
		}
	})
	t.Logf("%d texts of redis-server's found in %s", checked, bin)
	if checked < 50 {
		t.Fatalf("checked %d texts: the section of redis-server's replies was not found whole", checked)
	}
}

// TestHandlersDoNotReadTheirName (S3): a command's variants are bound in
// the command table (table.go) as arguments of one handler; no handler
// (cmdX, xCmd) reads its command's name, args[0].
func TestHandlersDoNotReadTheirName(t *testing.T) {
	handlers := 0
	for name, file := range packageFiles(t) {
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "cmd") && !strings.HasSuffix(fn.Name.Name, "Cmd") {
				continue
			}
			handlers++
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if ix, ok := n.(*ast.IndexExpr); ok {
					id, ok1 := ix.X.(*ast.Ident)
					lit, ok2 := ix.Index.(*ast.BasicLit)
					if ok1 && ok2 && id.Name == "args" && lit.Value == "0" {
						t.Errorf("%s: %s reads args[0], its command's name", name, fn.Name.Name)
					}
				}
				return true
			})
		}
	}
	if handlers < 50 {
		t.Fatalf("found %d handlers", handlers)
	}
}
