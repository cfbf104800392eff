package checks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"

	"idemlab/correct"
	"idemlab/lab"
	"idemlab/lab/labtest"
	"idemlab/lab/report"
	"idemlab/scenarios"
	"idemlab/variants"
)

// NewVariantWork is what the newvariant exercise asks for: a variant and
// the scenario that catches it.
type NewVariantWork struct {
	Variant  lab.Variant
	Scenario labtest.Scenario
}

// NewVariant is the check of the newvariant exercise. It judges the
// scenario by what it does with handlers, never by its text:
//
//   - Fair: the scenario holds on correct/, on every handler of
//     variants.Equivalents, and on correct/ with a pool of one connection, as its
//     doc recommends: it asks for nothing the pattern does not give;
//   - Behaviour: it judges what a handler answers and what the database
//     holds, not the text of the handler's SQL: it holds on correct/ with
//     its statements reworded (Reworded), and it reads no transcript;
//   - Catches: it fails on the variant;
//   - Asserts: and it says so itself (r.Errorf, r.WantOutcome, …), not
//     only through the checks the lab makes on its own after every
//     delivery and every run (a failed delivery that changed the
//     database, an inbox row without its credit, …);
//   - New: no column of the matrix, the limits of the pattern included,
//     tells the variant from correct/: every column gives it correct/'s
//     limitVerdict, so that only the scenario written for it catches it.
func NewVariant(c *Checker, w NewVariantWork) {
	sc := w.Scenario
	run := func(v lab.Variant) *report.Cell {
		useLabDefaults()
		return labtest.RunCell(c.T, sc, v)
	}
	if cell := run(correct.Variant); !cell.Pass {
		c.Fail(Failure{Guarantee: "Fair", Shows: fairShows,
			Lines: prefix(sc.Name+" fails on correct/: ", cell.Failures), Transcript: cell.Transcript})
	}
	if c.Done() {
		return
	}
	if reads := transcriptReads(sc.Run); len(reads) > 0 {
		c.Fail(Failure{Guarantee: "Behaviour", Shows: behaviourShows, Lines: reads})
	} else if cell := run(Reworded); !cell.Pass {
		c.Fail(Failure{Guarantee: "Behaviour", Shows: behaviourShows,
			Lines: prefix(sc.Name+" fails on correct/ with its SQL reworded (keywords in lower case, named parameters, "+
				"columns in another order; nothing else changed): ", cell.Failures), Transcript: cell.Transcript})
	}
	for _, v := range append(slices.Clone(variants.Equivalents), variants.PoolOfOne(correct.Variant)) {
		if c.Done() {
			return
		}
		if cell := run(v); !cell.Pass {
			c.Fail(Failure{Guarantee: "Fair", Shows: fairShows,
				Lines:      prefix(fmt.Sprintf("%s fails on %s, which does what correct/ does: ", sc.Name, v.Name), cell.Failures),
				Transcript: cell.Transcript})
		}
	}
	if c.Done() {
		return
	}
	switch cell := run(w.Variant); {
	case cell.Pass:
		detail := ""
		if cell.Detail != "" {
			detail = " (" + cell.Detail + ")"
		}
		c.Failf("Catches", "your scenario fails on your variant: it catches the mistake",
			"%s holds on %s: it does not catch the mistake %q%s", sc.Name, w.Variant.Name, w.Variant.Mistake, detail)
	case len(scenarioOwnFailures(cell)) == 0:
		c.Fail(Failure{Guarantee: "Asserts", Shows: "your scenario itself reports the guarantee your variant breaks, not only the lab's own checks",
			Lines:      prefix(fmt.Sprintf("every expectation of %s holds on %s; only the lab's own checks failed it: ", sc.Name, w.Variant.Name), cell.Failures),
			Transcript: cell.Transcript})
	}
	for _, m := range scenarios.All {
		if c.Done() {
			return
		}
		matrixTellsApart(c, m, w.Variant)
	}
}

const (
	fairShows      = "your scenario holds on correct/ and on every handler that does what it does: it asks for nothing the pattern does not give"
	behaviourShows = "your scenario judges what a handler answers and what the database holds, never the text of its SQL"
)

// matrixTellsApart fails c if m, a column of the matrix, tells v from correct/:
// v breaks a column correct/ holds, or, on a limit of the pattern, which
// correct/ breaks by design, v's limitVerdict is not correct/'s.
func matrixTellsApart(c *Checker, m labtest.Scenario, v lab.Variant) {
	useLabDefaults()
	cell := labtest.RunCell(c.T, m, v)
	if m.Limit == "" {
		if !cell.Pass {
			c.Fail(Failure{Guarantee: "New", Shows: newShows,
				Lines: prefix(fmt.Sprintf("the matrix's %s already catches it: ", m.Name), cell.Failures), Transcript: cell.Transcript})
		}
		return
	}
	want := labtest.RunCell(c.T, m, correct.Variant)
	if cell.Pass == want.Pass && slices.Equal(cell.Failures, want.Failures) {
		return
	}
	c.Fail(Failure{Guarantee: "New", Shows: newShows,
		Lines: []string{fmt.Sprintf("the matrix's %s, a limit of the pattern (%s), already tells it from correct/: %s = %s, want correct/'s %s",
			m.Name, m.Limit, v.Name, limitVerdict(cell), limitVerdict(want))},
		Transcript: cell.Transcript})
}

const newShows = "no column of the matrix, its limits included, tells your variant from correct/: the mistake is one nobody has made here yet"

// limitVerdict is a cell's limitVerdict in a few words: "holds" or its first failure.
func limitVerdict(cell *report.Cell) string {
	if cell.Pass {
		return "holds"
	}
	return fmt.Sprintf("fails (%s)", cell.Failures[0])
}

// scenarioOwnFailures returns the failures of cell that its scenario reported
// itself, with r.Errorf or a Want helper, leaving out what the lab found on
// its own (report.Cell.ByLab): an invariant Close checks, a check the lab
// makes around each delivery (a failed attempt or a duplicate that changed
// the database, a handler's panic, a transaction left open, a call without
// the delivery's context), and a tally of interleavings that quotes one.
func scenarioOwnFailures(cell *report.Cell) []string {
	var own []string
	for i, f := range cell.Failures {
		if i >= len(cell.ByLab) || !cell.ByLab[i] {
			own = append(own, f)
		}
	}
	return own
}

// transcriptReads returns where run, or a function of the same file it
// calls, reads a transcript (r.Transcript.String(), .Lines(), .From(),
// .Len(), or the Transcript itself passed on): a limitVerdict drawn from the
// text of the statements a handler ran, not from what it answered and
// stored. Writing to it (r.Transcript.Note) is no read. It returns nothing
// when the source cannot be read.
func transcriptReads(run func(*labtest.Run)) []string {
	if run == nil {
		return nil
	}
	pc := reflect.ValueOf(run).Pointer()
	fn := runtime.FuncForPC(pc)
	if fn == nil {
		return nil
	}
	file, line := fn.FileLine(pc)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		return nil
	}
	src, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	// The function run is, and the file's own functions by name, to follow
	// a call to a helper.
	var body ast.Node
	decls := map[string]ast.Node{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			decls[n.Name.Name] = n
			if body == nil && fset.Position(n.Pos()).Line == line {
				body = n
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if i < len(n.Values) {
					if lit, ok := n.Values[i].(*ast.FuncLit); ok {
						decls[name.Name] = lit
					}
				}
			}
		case *ast.FuncLit:
			if body == nil && fset.Position(n.Pos()).Line == line {
				body = n
			}
		}
		return true
	})
	if body == nil {
		return nil
	}
	rel := file
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(filepath.Dir(wd), file); err == nil {
			rel = filepath.ToSlash(r)
		}
	}
	var reads []string
	seen := map[ast.Node]bool{}
	for todo := []ast.Node{body}; len(todo) > 0; {
		n := todo[0]
		todo = todo[1:]
		if seen[n] {
			continue
		}
		seen[n] = true
		var stack []ast.Node // the parents of the node Inspect is at
		ast.Inspect(n, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			if id, ok := n.(*ast.Ident); ok && decls[id.Name] != nil {
				todo = append(todo, decls[id.Name])
			}
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "Transcript" && !transcriptNoted(stack) {
				reads = append(reads, fmt.Sprintf("%s:%d reads the transcript, %s: the text of the statements the handler ran, "+
					"which another handler that does the same writes otherwise", rel, fset.Position(sel.Pos()).Line,
					nodeText(src, fset, transcriptExpr(stack, sel))))
			}
			stack = append(stack, n)
			return true
		})
	}
	return reads
}

// transcriptNoted reports whether the Transcript selector whose parents are stack
// is written to, as in r.Transcript.Note(…).
func transcriptNoted(stack []ast.Node) bool {
	if len(stack) == 0 {
		return false
	}
	parent, ok := stack[len(stack)-1].(*ast.SelectorExpr)
	return ok && parent.Sel.Name == "Note"
}

// transcriptExpr is the largest selector or call expression around sel, for
// the message: r.Transcript.String().
func transcriptExpr(stack []ast.Node, sel ast.Node) ast.Node {
	n := sel
	for i := len(stack) - 1; i >= 0; i-- {
		switch p := stack[i].(type) {
		case *ast.SelectorExpr:
			n = p
		case *ast.CallExpr:
			if p.Fun != n {
				return n
			}
			n = p
		default:
			return n
		}
	}
	return n
}

// nodeText is the source text of n, on one line.
func nodeText(src []byte, fset *token.FileSet, n ast.Node) string {
	from, to := fset.Position(n.Pos()).Offset, fset.Position(n.End()).Offset
	if from < 0 || to > len(src) || from >= to {
		return "?"
	}
	return strings.Join(strings.Fields(string(src[from:to])), " ")
}

// Reworded is correct/ with the text of its SQL changed and nothing else:
// keywords in lower case, named parameters (:event_id, which a transcript
// shows as they are, not as the values they stand for), the columns and
// the conditions in another order, other line breaks. Every column of the
// matrix holds on it (TestRewordedHoldsTheMatrix). A scenario that holds
// on correct/ and fails here judged the text of the statements, not what
// they did.
var Reworded = lab.Variant{Name: "correct/ reworded", Schema: correct.Schema, DSN: correct.DSN,
	New: func(db *sql.DB) lab.Processor { return &reworded{db} }}

// reworded is Reworded's handler: correct's Process, statement for
// statement.
type reworded struct{ db *sql.DB }

func (h *reworded) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	if err := e.Validate(); err != nil {
		return 0, err
	}
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, lab.Classify(err)
	}
	defer tx.Rollback()
	key := []any{sql.Named("source", e.Source), sql.Named("event_id", e.EventID)}
	res, err := tx.ExecContext(ctx, `insert into inbox
		(event_id, source, amount, account_id) values (:event_id, :source, :amount, :account_id)
		on conflict (source, event_id) do nothing`,
		append(key, sql.Named("account_id", e.AccountID), sql.Named("amount", e.Amount))...)
	if err != nil {
		return 0, rewordedClassify(ctx, err)
	}
	inserted, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	outcome := lab.Applied
	if inserted == 1 {
		res, err := tx.ExecContext(ctx, `update accounts set balance = :amount + balance where id = :account_id`,
			sql.Named("amount", e.Amount), sql.Named("account_id", e.AccountID))
		if err != nil {
			return 0, rewordedClassify(ctx, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return 0, fmt.Errorf("%w: crediting account %d changed no row", lab.ErrUnknownAccount, e.AccountID)
		}
	} else {
		var account, amount int64
		if err := tx.QueryRowContext(ctx, `select amount, account_id from inbox
			where event_id = :event_id and source = :source`, key...).Scan(&amount, &account); err != nil {
			return 0, rewordedClassify(ctx, err)
		}
		if account != e.AccountID || amount != e.Amount {
			return 0, fmt.Errorf("%w: %s was applied with account=%d amount=%d, this delivery has account=%d amount=%d",
				lab.ErrPayloadConflict, e.Key(), account, amount, e.AccountID, e.Amount)
		}
		outcome = lab.Duplicate
	}
	if err := rewordedClassify(ctx, tx.Commit()); err != nil {
		return 0, err
	}
	return outcome, nil
}

// rewordedClassify is correct's classify: lab.Classify, after asking the
// caller's context.
func rewordedClassify(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		err = fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	return lab.Classify(err)
}

// prefix returns lines, each with p before it.
func prefix(p string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = p + l
	}
	return out
}
