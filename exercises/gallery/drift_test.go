package gallery_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// twins are the exercises that start from a naive variant: each must stay
// that variant, so that the exercise teaches what the matrix shows.
var twins = map[string]string{
	"sourcescope":    "sourceless",
	"missingaccount": "nofk",
	"checkthenact":   "checkthenact",
	"markfirst":      "markfirst",
	"insertorignore": "insertorignore",
}

// TestNoDrift compares each of those exercises with its naive twin, file by
// file, as code: the package clause, comments (Go's and SQL's -- comments
// inside the schema) and the Name and Mistake of variant.go may differ —
// the exercise hides the comments that give the answer away — and so may
// its Postgres field: the exercises run on SQLite, and a naive variant's
// PostgreSQL form (its postgres.go) is no part of its exercise. Nothing
// else may. A fix made to naive/ and not to the exercise, or the other way
// round, fails here.
func TestNoDrift(t *testing.T) {
	for ex, naive := range twins {
		for _, file := range []string{"process.go", "schema.go", "variant.go"} {
			got := normalized(t, filepath.Join("..", ex, file))
			want := normalized(t, filepath.Join("..", "..", "naive", naive, file))
			if got != want {
				t.Errorf("exercises/%s/%s has drifted from naive/%s/%s: they must differ only in comments, the package clause and the variant's Name and Mistake\n--- exercise\n%s\n--- naive\n%s",
					ex, file, naive, file, got, want)
			}
		}
	}
}

var sqlComment = regexp.MustCompile(`[ \t]*--[^\n]*`)

// normalized prints the file's code without comments, with package p, SQL
// comments dropped from string literals and the Name and Mistake fields of
// a composite literal blanked, and its Postgres field left out.
func normalized(t *testing.T, path string) string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, 0) // no comments
	if err != nil {
		t.Fatal(err)
	}
	f.Name.Name = "p"
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			n.Elts = slices.DeleteFunc(n.Elts, func(e ast.Expr) bool {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					return false
				}
				k, ok := kv.Key.(*ast.Ident)
				return ok && k.Name == "Postgres"
			})
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				if s, err := strconv.Unquote(n.Value); err == nil {
					n.Value = strconv.Quote(sqlComment.ReplaceAllString(s, ""))
				}
			}
		case *ast.KeyValueExpr:
			if k, ok := n.Key.(*ast.Ident); ok && (k.Name == "Name" || k.Name == "Mistake") {
				n.Value = &ast.BasicLit{Kind: token.STRING, Value: `""`}
			}
		}
		return true
	})
	var b bytes.Buffer
	if err := printer.Fprint(&b, token.NewFileSet(), f); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestNoDriftCatches holds TestNoDrift's comparison to a drift: a changed
// statement is seen, a changed comment is not.
func TestNoDriftCatches(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := normalized(t, write("a.go", "package a\n\n// Doc.\nconst Schema = `CREATE TABLE t (x INTEGER) -- a note\n`\n"))
	if got := normalized(t, write("b.go", "package b\n\n// Other doc.\nconst Schema = `CREATE TABLE t (x INTEGER)\n`\n")); got != base {
		t.Errorf("a comment-only change counts as drift:\n%s\n%s", got, base)
	}
	if got := normalized(t, write("c.go", "package c\n\nconst Schema = `CREATE TABLE t (x TEXT)\n`\n")); got == base {
		t.Errorf("a changed schema is not seen as drift")
	}
	v := normalized(t, write("v.go", "package v\n\nvar V = lab.Variant{Name: \"a\", DSN: DSN}\n"))
	if got := normalized(t, write("w.go", "package w\n\nvar V = lab.Variant{Name: \"b\", DSN: DSN, Postgres: &lab.Postgres{DSN: PostgresDSN}}\n")); got != v {
		t.Errorf("a PostgreSQL form counts as drift:\n%s\n%s", got, v)
	}
	if got := normalized(t, write("x.go", "package x\n\nvar V = lab.Variant{Name: \"a\", DSN: OtherDSN}\n")); got == v {
		t.Errorf("a changed DSN is not seen as drift")
	}
}
