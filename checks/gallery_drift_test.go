package checks_test

import (
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
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
// file, as code. A naive variant holds only the files its mistake changes
// and takes the rest from correct/, so where the twin has no such file the
// exercise's is compared with correct's. The package clause, the imports
// (the code that uses them is compared), comments (Go's and SQL's --
// comments inside the schema) and the Name and Mistake of variant.go may
// differ — the exercise hides the comments that give the answer away — and
// so may its Postgres field: the exercises run on SQLite, and a naive
// variant's PostgreSQL form is no part of its exercise. What the twin takes
// from correct/ by name (correct.Schema, correct.New) the exercise holds as
// its own copy (Schema, New), itself compared with correct's. Nothing else
// may differ. A fix made to naive/ and not to the exercise, or the other way
// round, fails here.
func TestNoDrift(t *testing.T) {
	for ex, naive := range twins {
		for _, file := range []string{"process.go", "schema.go", "variant.go"} {
			got := normalized(t, filepath.Join("..", "exercises", ex, file))
			twin := filepath.Join("naive", naive, file)
			if _, err := os.Stat(filepath.Join("..", twin)); errors.Is(err, fs.ErrNotExist) {
				twin = filepath.Join("correct", file)
			}
			want := normalized(t, filepath.Join("..", twin))
			if got != want {
				t.Errorf("exercises/%s/%s has drifted from %s: they must differ only in comments, imports, the package clause and the variant's Name and Mistake\n--- exercise\n%s\n--- %s\n%s",
					ex, file, twin, got, twin, want)
			}
		}
	}
}

var sqlComment = regexp.MustCompile(`[ \t]*--[^\n]*`)

// normalized prints the file's code without comments or imports, with
// package p, SQL comments dropped from string literals, the Name and
// Mistake fields of a composite literal blanked, its Postgres field left
// out, and what it takes from correct/ by name unqualified.
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
	f.Imports = nil
	f.Decls = slices.DeleteFunc(f.Decls, func(d ast.Decl) bool {
		g, ok := d.(*ast.GenDecl)
		return ok && g.Tok == token.IMPORT
	})
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
		case *ast.CallExpr:
			n.Fun = unqualified(n.Fun)
			for i, a := range n.Args {
				n.Args[i] = unqualified(a)
			}
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				if s, err := strconv.Unquote(n.Value); err == nil {
					n.Value = strconv.Quote(sqlComment.ReplaceAllString(s, ""))
				}
			}
		case *ast.KeyValueExpr:
			if k, ok := n.Key.(*ast.Ident); ok && (k.Name == "Name" || k.Name == "Mistake") {
				n.Value = &ast.BasicLit{Kind: token.STRING, Value: `""`}
			} else {
				n.Value = unqualified(n.Value)
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

// unqualified is e without its correct. qualifier: correct.Schema is
// Schema.
func unqualified(e ast.Expr) ast.Expr {
	if s, ok := e.(*ast.SelectorExpr); ok {
		if x, ok := s.X.(*ast.Ident); ok && x.Name == "correct" {
			return s.Sel
		}
	}
	return e
}

// TestNoDriftCatches holds TestNoDrift's comparison to a drift: a changed
// statement is seen; a changed comment, import or PostgreSQL form is not,
// nor a name taken from correct/ where the exercise has its own copy.
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
	own := normalized(t, write("own.go", "package own\n\nimport \"database/sql\"\n\nvar V = lab.Variant{Schema: Schema, DSN: DSN, New: func(db *sql.DB) lab.Processor { return New(db) }}\n"))
	if got := normalized(t, write("taken.go", "package taken\n\nimport (\n\t\"database/sql\"\n\n\t\"idemlab/correct\"\n)\n\nvar V = lab.Variant{Schema: correct.Schema, DSN: correct.DSN, New: func(db *sql.DB) lab.Processor { return correct.New(db) }}\n")); got != own {
		t.Errorf("what a variant takes from correct/ counts as drift from the exercise's own copy:\n%s\n%s", got, own)
	}
	if got := normalized(t, write("other.go", "package other\n\nimport \"database/sql\"\n\nvar V = lab.Variant{Schema: Schema, DSN: DSN, New: func(db *sql.DB) lab.Processor { return other.New(db) }}\n")); got == own {
		t.Errorf("a handler taken from another package than correct/ is not seen as drift")
	}
}
