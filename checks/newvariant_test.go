package checks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"modernc.org/sqlite"
	"pgregory.net/rapid"

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
//   - Fair: the scenario holds on every handler that does what correct/
//     does: on correct/, on every handler of variants.Equivalents, on
//     correct/ with a pool of one connection (the listed first draws),
//     then on FairSearch's handlers;
//   - Behaviour: it judges what a handler answers and what the database
//     holds, not words: it reads no transcript, and it holds on correct/
//     with the text of its SQL, of its schema or of its errors reworded,
//     and on its schema with more in it than the handler uses (a column
//     nothing fills, a column with a default, an index: Rewordings), and
//     on correct/ labelled with the variant's name and mistake (the listed
//     first draws), then on BehaviourSearch's handlers;
//   - Catches: it fails on the variant, and on the scenario's own
//     deliveries the variant answers or stores something correct/ does
//     not, so that the failure is the mistake's, not its words'; it still
//     fails once the variant's label, its schema's text and its errors'
//     words say nothing (Unlabelled, the listed first draw), then on
//     CatchesSearch's rewordings of the variant;
//   - Asserts: and it says so itself (r.Errorf, r.WantOutcome, …), not
//     only through the checks the lab makes on its own after every
//     delivery and every run (a failed delivery that changed the
//     database, an inbox row without its credit, …);
//   - New: no column of the matrix, the limits of the pattern included,
//     tells the variant from correct/: every column gives it correct/'s
//     limitVerdict, so that only the scenario written for it catches it.
//
// Fair, Behaviour and Catches each end with a search, reported under the
// guarantee's name: FairSearch and BehaviourSearch (correctSearch) draw
// handlers the scenario must hold on, CatchesSearch (catchesSearch)
// rewordings of the variant it must fail on, by its own expectations.
// BehaviourSearch leaves to FairSearch a story whose scenario fails on
// correct/'s own words too (in that zone). The verdict depends on these
// dimensions, and rapid draws each of them (see newvariant_draw_test.go),
// every share of a search's stories in a time zone of its own (see
// Search):
//
//   - which handler equivalent to correct/ the scenario runs on (Fair): a
//     composition of the legitimate choices of ../equivalent — the stored
//     row read first, ON CONFLICT without a target, COMMIT before a
//     payload conflict, reads and a ping on the pool before BEGIN, every
//     delivery behind a mutex, a plain BEGIN, WAL — and the account
//     looked up first (a missing one answered before the inbox is read, as
//     scenarios/repeat.go allows), with every rewording below; never a
//     plain BEGIN with a read before the first write (naive/deferred);
//   - the words of correct/ (Behaviour, and Fair): its SQL's keywords'
//     case, parameters ($1, ?1, ?, :name), the INSERT's column order,
//     the order of the SELECT's columns, of the conditions, of the
//     conflict target and of the sum, a table alias, line breaks; its
//     schema's text (case, line breaks, comments), its key declared
//     (event_id, source) or UNIQUE, unused columns, a column with a
//     default and an index; its errors' words; its label (correct/'s,
//     the variant's, none);
//   - the words of the variant (Catches): its label (its own, none), its
//     schema's text, an unused index, its errors' words; its behaviour
//     is kept, pool included: the variant is run on the pool it asks for,
//     since a mistake may live in the pool's shape (naive/nofk);
//   - the lab's own dimensions a scenario runs under: the pool's shape
//     (the lab's, one connection, at most two: Fair), the process's time
//     zone (six, for every search: a scenario must catch the variant
//     wherever the matrix runs, and hold on correct/ wherever it runs),
//     and rapid's seed (-rapid.seed; the scenario's own rapid draws, if it
//     has any, follow it).
//
// A story that breaks a search names the changes it drew and the zone,
// shrunk (with -exercise) to the fewest that still break it, with the
// transcript of the scenario on that handler.
func NewVariant(c *Checker, w NewVariantWork) {
	sc := w.Scenario
	run := func(v lab.Variant) *report.Cell {
		useLabDefaults()
		return labtest.RunCell(c.T, sc, v)
	}
	failed := func(guarantee string) bool {
		return slices.ContainsFunc(c.failures, func(f Failure) bool { return f.Guarantee == guarantee })
	}
	// What correct/ and the variant do on the scenario's own deliveries,
	// for Catches to compare.
	var ofCorrect, ofVariant behaviourLog
	if !sharing() {
		if cell := ofCorrect.run(c.T, sc, correct.Variant); !cell.Pass {
			c.Fail(Failure{Guarantee: "Fair", Shows: fairShows,
				Lines: prefix(sc.Name+" fails on correct/: ", cell.Failures), Transcript: cell.Transcript})
		}
	}
	if c.Done() {
		return
	}
	relabelled := correct.Variant
	relabelled.Name, relabelled.Mistake = w.Variant.Name+" (correct/'s handler)", w.Variant.Mistake
	reads := transcriptReads(sc.Run)
	switch {
	case c.Skips("Behaviour"):
		// (the quick suite's wrong fix that another guarantee rejects: see Skips)
	case len(reads) > 0:
		c.Fail(Failure{Guarantee: "Behaviour", Shows: behaviourShows, Lines: reads})
	default:
		for _, rw := range append(slices.Clone(Rewordings), Rewording{relabelled,
			fmt.Sprintf("labelled as your variant is (name %q, mistake %q; its handler and schema unchanged)", w.Variant.Name, w.Variant.Mistake)}) {
			if cell := run(rw.Variant); !cell.Pass {
				c.Fail(Failure{Guarantee: "Behaviour", Shows: behaviourShows,
					Lines: prefix(fmt.Sprintf("%s fails on correct/ %s: ", sc.Name, rw.What), cell.Failures), Transcript: cell.Transcript})
				break
			}
		}
	}
	if !failed("Behaviour") {
		c.Search(correctSearch(w, "Behaviour", behaviourShows, false), correct.Variant)
	}
	for _, v := range append(slices.Clone(variants.Equivalents), variants.PoolOfOne(correct.Variant)) {
		if c.Done() || c.Skips("Fair") {
			break
		}
		if cell := run(v); !cell.Pass {
			c.Fail(Failure{Guarantee: "Fair", Shows: fairShows,
				Lines:      prefix(fmt.Sprintf("%s fails on %s, which does what correct/ does: ", sc.Name, v.Name), cell.Failures),
				Transcript: cell.Transcript})
		}
	}
	if !failed("Fair") {
		c.Search(correctSearch(w, "Fair", fairShows, true), correct.Variant)
	}
	if c.Done() {
		return
	}
	if !c.Skips("Catches") || !c.Skips("Asserts") {
		catches(c, w, &ofCorrect, &ofVariant, run)
	}
	if !failed("Catches") && !failed("Asserts") {
		c.Search(catchesSearch(w), w.Variant)
	}
	for _, m := range scenarios.All {
		if c.Done() || c.Skips("New") {
			return
		}
		matrixTellsApart(c, m, w.Variant)
	}
}

// catches holds w's scenario to failing on w's variant, for what the
// variant does, by its own expectations (Catches, Asserts): on the
// variant, then on the variant unlabelled. ofCorrect holds what correct/
// did on the scenario's deliveries; ofVariant records what the variant
// does.
func catches(c *Checker, w NewVariantWork, ofCorrect, ofVariant *behaviourLog, run func(lab.Variant) *report.Cell) {
	sc := w.Scenario
	switch cell := ofVariant.run(c.T, sc, w.Variant); {
	case cell.Pass:
		detail := ""
		if cell.Detail != "" {
			detail = " (" + cell.Detail + ")"
		}
		c.Failf("Catches", catchesShows,
			"%s holds on %s: it does not catch the mistake %q%s", sc.Name, w.Variant.Name, w.Variant.Mistake, detail)
	case len(scenarioOwnFailures(cell)) == 0:
		c.Fail(Failure{Guarantee: "Asserts", Shows: assertsShows,
			Lines:      prefix(fmt.Sprintf("every expectation of %s holds on %s; only the lab's own checks failed it: ", sc.Name, w.Variant.Name), cell.Failures),
			Transcript: cell.Transcript})
	case ofVariant.same(ofCorrect):
		c.Failf("Catches", catchesShows,
			"%s fails on %s, which answers every delivery of it as correct/ does (%s) and leaves every database with correct/'s rows: "+
				"the failure comes from something else than what the handler does (its name, its schema's text or structure, an error's words)",
			sc.Name, w.Variant.Name, ofVariant.summary())
	default:
		if c.Done() {
			return
		}
		if cell := run(Unlabelled(w.Variant)); cell.Pass {
			c.Failf("Catches", catchesShows,
				"%s fails on %s, and holds on the same handler once its name, its mistake, its schema's words and its errors' words "+
					"say nothing (the same statements, the same answers): it caught the words, not the mistake", sc.Name, w.Variant.Name)
		}
	}
}

// newVariantStories is how many stories each of exercise 11's searches
// tells, at -rapid.checks=100: a story is one run of the student's
// scenario, a cell of its own. CatchesSearch's rewordings are few (16),
// and each zone sees most of them.
const newVariantStories, catchesStories = 100, 36

// correctSearch is BehaviourSearch (how unset: correct/'s transaction in
// other words) or FairSearch (how set: correct/'s transaction done
// another legitimate way too, on a pool of any shape): w's scenario must
// hold on every handler drawn. Its failure is guarantee's.
func correctSearch(w NewVariantWork, guarantee, shows string, how bool) propertySpec {
	sc := w.Scenario
	return propertySpec{exercise: "newvariant", name: guarantee, shows: shows, stories: newVariantStories,
		outside: func(tb *testing.T, t *rapid.T) {
			d := drawCorrect(t, how)
			useLabDefaults()
			cell := labtest.RunCell(tb, sc, d.variant(w.Variant))
			if cell.Pass {
				return
			}
			if plain := labtest.RunCell(tb, sc, correctDraw{}.variant(w.Variant)); !plain.Pass {
				if !how {
					return // not the words' doing: FairSearch's to tell
				}
				// correct/ itself fails here, in this time zone: the
				// story says so, whatever else was drawn.
				d, cell = correctDraw{}, plain
			}
			t.Fatalf("%s fails on %s: %s\n\nthe story:\n%s", sc.Name, d, cell.Failures[0], cellStory(d.String(), cell))
		}}
}

// catchesSearch is CatchesSearch: w's scenario must fail on every drawn
// rewording of w's variant, by its own expectations.
func catchesSearch(w NewVariantWork) propertySpec {
	sc := w.Scenario
	return propertySpec{exercise: "newvariant", name: "Catches", shows: catchesShows, stories: catchesStories,
		outside: func(tb *testing.T, t *rapid.T) {
			rw := drawVariantRewording(t)
			useLabDefaults()
			cell := labtest.RunCell(tb, sc, rw.apply(w.Variant))
			what := rw.describe(w.Variant)
			switch {
			case cell.Pass:
				t.Fatalf("%s holds on %s, which does what your variant does: it does not catch the mistake wherever it runs\n\nthe story:\n%s",
					sc.Name, what, cellStory(what, cell))
			case len(scenarioOwnFailures(cell)) == 0:
				t.Fatalf("every expectation of %s holds on %s; only the lab's own checks failed it: %s\n\nthe story:\n%s",
					sc.Name, what, cell.Failures[0], cellStory(what, cell))
			}
		}}
}

// cellStory tells a story of exercise 11's searches: the handler drawn,
// and the scenario's transcript on it, at most storyLines long.
func cellStory(handler string, cell *report.Cell) string {
	lines := strings.Split(strings.TrimRight(cell.Transcript, "\n"), "\n")
	if len(lines) > storyLines {
		lines = append(lines[:storyLines], fmt.Sprintf("… %d more lines", len(lines)-storyLines))
	}
	return "1. the handler: " + handler + "\n2. your scenario on it:" + indented(strings.Join(lines, "\n"))
}

// storyLines caps the transcript a story of exercise 11's searches shows.
const storyLines = 30

// A variantRewording is the student's variant in other words, doing what
// it does: the Catches search draws them. Its zero value is the variant
// as it is.
type variantRewording struct {
	unlabelled     bool // no name a scenario would know, no mistake (as Unlabelled)
	schemaReworded bool // its schema's text reworded (rewordSchema)
	indexAdded     bool // an index nothing uses, on accounts (balance)
	errorsReworded bool // its errors' words changed (as RewordedErrors)
}

// drawVariantRewording draws a rewording of a variant.
func drawVariantRewording(t *rapid.T) variantRewording {
	return variantRewording{
		unlabelled:     rapid.Bool().Draw(t, "unlabelled"),
		schemaReworded: rapid.Bool().Draw(t, "schema reworded"),
		indexAdded:     rapid.Bool().Draw(t, "index added"),
		errorsReworded: rapid.Bool().Draw(t, "errors reworded"),
	}
}

// apply is v reworded as rw says.
func (rw variantRewording) apply(v lab.Variant) lab.Variant {
	name := v.Name
	if rw.errorsReworded {
		v = withRewordedErrors(v, name)
	}
	if rw.unlabelled {
		v.Name, v.Mistake = fmt.Sprintf("variant %08x, unlabelled", crc32.ChecksumIEEE([]byte(name))), ""
	}
	if rw.indexAdded {
		v.Schema += "\nCREATE INDEX exercise11_unused ON accounts (balance);\n"
	}
	if rw.schemaReworded {
		v.Schema = rewordSchema(v.Schema)
	}
	return v
}

// describe names v reworded as rw says, for a story.
func (rw variantRewording) describe(v lab.Variant) string {
	var what []string
	for _, c := range []struct {
		on   bool
		what string
	}{
		{rw.unlabelled, "unlabelled (no name you know, no mistake)"},
		{rw.schemaReworded, "its schema's text reworded (case, line breaks, no comments)"},
		{rw.indexAdded, "an index nothing uses, on accounts (balance)"},
		{rw.errorsReworded, "its errors' words changed"},
	} {
		if c.on {
			what = append(what, c.what)
		}
	}
	if len(what) == 0 {
		return v.Name + ", as it is"
	}
	return v.Name + " with: " + strings.Join(what, "; ")
}

const (
	fairShows      = "your scenario holds on correct/ and on every handler that does what it does: it asks for nothing the pattern does not give"
	behaviourShows = "your scenario judges what a handler answers and what the database holds, never words: the text of its SQL, its schema, its errors, its label"
	catchesShows   = "your scenario fails on your variant, for what the variant does: it catches the mistake"
	assertsShows   = "your scenario itself reports the guarantee your variant breaks, not only the lab's own checks"
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
// the conditions in another order: a point of what BehaviourSearch draws
// (correctDraw), tried before it draws (Rewordings). Every column of the matrix
// holds on it (TestRewordedHoldsTheMatrix). A scenario that holds
// on correct/ and fails here judged the text of the statements, not what
// they did.
var Reworded = func() lab.Variant {
	v := correctDraw{sql: sqlWords{lower: true, params: 3, columns: insertOrders[1], swap: true}}.variant(lab.Variant{})
	v.Name = "correct/ reworded"
	return v
}()

// rewordedClassify is correct's classify: lab.Classify, after asking the
// caller's context.
func rewordedClassify(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		err = fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	return lab.Classify(err)
}

// A Rewording is correct/ with some of its words changed and nothing it
// does: a scenario that judges behaviour holds on it.
type Rewording struct {
	Variant lab.Variant
	What    string // how it differs from correct/, after "correct/ "
}

// Rewordings are the rewordings of correct/ a scenario must hold on
// (Behaviour): its SQL, its schema and its errors, each in other words,
// and its schema with more in it than its handler uses.
// Every column of the matrix gives each correct/'s verdict
// (TestRewordedHoldsTheMatrix).
var Rewordings = []Rewording{
	{Reworded, "with its SQL reworded (keywords in lower case, named parameters, columns in another order; nothing else changed)"},
	{RewordedSchema, "with its schema's text reworded (keywords' and names' case swapped, comments dropped, other line breaks, " +
		"the inbox's key as (event_id, source)): the same tables, the same constraints"},
	{RewordedErrors, "with its errors' words changed (each error is of the kinds it was, for errors.Is, and says nothing else)"},
	{ExtendedSchema, "with what a schema may add that no statement of the handler reads: an unused nullable column and a column " +
		"with a default in each table, an index on the inbox's account_id"},
}

// ExtendedSchema is correct/ on its schema with more in it than its
// handler uses, as a schema that also serves other code has: a nullable
// column nothing fills and a column with a DEFAULT in each table (every
// INSERT names its columns, so each takes NULL or its default), and an
// index on inbox (account_id). What the handler answers and what it
// stores in the columns it names are correct/'s. A scenario that counts
// the inbox's columns or indexes (pragma_table_info, pragma_index_list),
// or reads whole rows (SELECT *) for their shape, fails on it.
var ExtendedSchema = lab.Variant{Name: "correct/ schema extended", DSN: correct.DSN, New: correct.Variant.New,
	Schema: extendSchema(correct.Schema)}

// extendSchema is schema, correct/'s, with ExtendedSchema's additions.
func extendSchema(schema string) string {
	for _, r := range []struct{ at, added string }{
		{"\n) STRICT;\n\nCREATE TABLE inbox", ",\n\tnote    TEXT,\n\tkind    TEXT NOT NULL DEFAULT 'customer'"},
		{"\tPRIMARY KEY (source, event_id)", "\tnote       TEXT,\n\tchannel    TEXT NOT NULL DEFAULT 'webhook',\n"},
	} {
		i := strings.Index(schema, r.at)
		if i < 0 {
			panic("extendSchema: correct.Schema has no " + strconv.Quote(r.at))
		}
		schema = schema[:i] + r.added + schema[i:]
	}
	return schema + "CREATE INDEX inbox_account ON inbox (account_id);\n"
}

// RewordedSchema is correct/ on its schema written otherwise: the same
// tables, columns and constraints, the inbox's key listing its columns in
// the other order (which the ON CONFLICT target still names: SQLite
// matches a target to a unique index by its set of columns), every word
// in the other case (SQLite reads keywords and names alike in any case),
// no comments, other line breaks. A scenario that reads the schema's text
// from sqlite_schema, or wants the key's index to list source first,
// fails on it.
var RewordedSchema = lab.Variant{Name: "correct/ schema reworded", DSN: correct.DSN, New: correct.Variant.New,
	Schema: rewordSchema(strings.Replace(correct.Schema, "PRIMARY KEY (source, event_id)", "PRIMARY KEY (event_id, source)", 1))}

// RewordedErrors is correct/ whose errors say other words: each is of the
// kinds it was (errors.Is finds in it what it found before: lab's kinds,
// the caller's context, an injected fault) and its text names only its
// kind.
var RewordedErrors = withRewordedErrors(correct.Variant, "correct/ errors reworded")

// withRewordedErrors is v, named name, whose handler's errors say other
// words (see RewordedErrors).
func withRewordedErrors(v lab.Variant, name string) lab.Variant {
	inner := v.New
	v.Name = name
	v.New = func(db *sql.DB) lab.Processor { return rewordingErrors{inner(db)} }
	return v
}

// rewordingErrors is a handler whose errors say other words.
type rewordingErrors struct{ inner lab.Processor }

func (h rewordingErrors) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	o, err := h.inner.Process(ctx, e)
	if err != nil {
		err = rewordedError{err}
	}
	return o, err
}

// rewordedError is err, for errors.Is and errors.As, in other words.
type rewordedError struct{ err error }

func (e rewordedError) Error() string {
	return "an error of kind " + lab.ErrorKind(e.err) + " (the check changed its words)"
}

func (e rewordedError) Unwrap() error { return e.err }

// Unlabelled is v with nothing left to tell it by but what it does: no
// name a scenario would know (a number drawn from v's, which the lab's
// probe of a handler keys by name), no mistake, its schema's text
// reworded as RewordedSchema's is (the same tables and constraints), its
// errors' words changed as RewordedErrors' are.
func Unlabelled(v lab.Variant) lab.Variant {
	u := withRewordedErrors(v, fmt.Sprintf("variant %08x, unlabelled", crc32.ChecksumIEEE([]byte(v.Name))))
	u.Mistake = ""
	u.Schema = rewordSchema(v.Schema)
	return u
}

// rewordSchema writes schema otherwise, meaning the same to SQLite: every
// ASCII letter outside quotes in the other case (SQLite reads keywords,
// names, types and functions alike in any case of ASCII letters), every
// comment dropped, every run of white space a line break and a tab. Quoted
// names and strings ('…', "…", `…`, […]) are kept as they are.
func rewordSchema(schema string) string {
	var b strings.Builder
	space := func() { b.WriteString("\n\t") }
	for i := 0; i < len(schema); {
		c := schema[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(schema) {
				if schema[j] == c {
					if j+1 < len(schema) && schema[j+1] == c {
						j += 2 // a doubled quote stands for one
						continue
					}
					j++
					break
				}
				j++
			}
			b.WriteString(schema[i:j])
			i = j
		case c == '[':
			j := strings.IndexByte(schema[i:], ']')
			if j < 0 {
				j = len(schema) - i - 1
			}
			b.WriteString(schema[i : i+j+1])
			i += j + 1
		case strings.HasPrefix(schema[i:], "--"):
			j := strings.IndexByte(schema[i:], '\n')
			if j < 0 {
				j = len(schema) - i
			}
			space()
			i += j
		case strings.HasPrefix(schema[i:], "/*"):
			j := strings.Index(schema[i+2:], "*/")
			if j < 0 {
				j = len(schema) - i - 2
			} else {
				j += 2
			}
			space()
			i += j + 2
		case strings.IndexByte(" \t\n\r", c) >= 0:
			for i < len(schema) && strings.IndexByte(" \t\n\r", schema[i]) >= 0 {
				i++
			}
			space()
		case 'a' <= c && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
			i++
		case 'A' <= c && c <= 'Z':
			b.WriteByte(c - 'A' + 'a')
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

// A behaviourLog is what a handler did in one run of a scenario: every
// answer it gave, in order, and the rows of every database the run opened,
// read once the scenario's story is told. Two handlers whose logs are the
// same gave the scenario nothing to tell them apart by but words.
type behaviourLog struct {
	mu       sync.Mutex
	armed    bool
	answers  []string
	paths    []string
	rows     []string // each database's rows, table by table, once the story is told
	complete bool     // the story ran to its end and every database was read
}

// run runs sc on v, recording what v's handler does in l.
func (l *behaviourLog) run(t *testing.T, sc labtest.Scenario, v lab.Variant) *report.Cell {
	dsn, newProc := v.DSN, v.New
	v.DSN = func(path string) string {
		l.mu.Lock()
		if l.armed && !slices.Contains(l.paths, path) {
			l.paths = append(l.paths, path)
		}
		l.mu.Unlock()
		return dsn(path)
	}
	v.New = func(db *sql.DB) lab.Processor { return answerRecorder{newProc(db), l} }
	story := sc.Run
	sc.Run = func(r *labtest.Run) {
		l.mu.Lock()
		l.armed = true // from here on: not the lab's probe of the handler
		l.mu.Unlock()
		story(r)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.armed = false
		l.complete = true
		for _, p := range l.paths {
			rows, err := databaseRows(p)
			if err != nil {
				l.complete = false
			}
			l.rows = append(l.rows, rows)
		}
	}
	useLabDefaults()
	return labtest.RunCell(t, sc, v)
}

// answerRecorder records each answer of its handler in a behaviourLog.
type answerRecorder struct {
	inner lab.Processor
	log   *behaviourLog
}

func (h answerRecorder) Process(ctx context.Context, e lab.Event) (lab.Outcome, error) {
	o, err := h.inner.Process(ctx, e)
	answer := o.String()
	if err != nil {
		answer = "an error (" + lab.ErrorKind(err) + ")"
	}
	h.log.mu.Lock()
	if h.log.armed {
		h.log.answers = append(h.log.answers, scenarios.ShowEvent(e)+": "+answer)
	}
	h.log.mu.Unlock()
	return o, err
}

// same reports whether l and other record the same answers and the same
// rows, each of them a story told to its end.
func (l *behaviourLog) same(other *behaviourLog) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	other.mu.Lock()
	defer other.mu.Unlock()
	return l.complete && other.complete && slices.Equal(l.answers, other.answers) && slices.Equal(l.rows, other.rows)
}

// summary names the answers l recorded, briefly.
func (l *behaviourLog) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.answers) <= 3 {
		return strings.Join(l.answers, "; ")
	}
	return strings.Join(l.answers[:3], "; ") + fmt.Sprintf("; … %d answers in all", len(l.answers))
}

// databaseRows reads every row of every table of the database file at
// path, on a connection of its own, table by table, each table's rows
// sorted.
func databaseRows(path string) (string, error) {
	c, err := sqlite.NewConnector(lab.SQLiteFile(path))
	if err != nil {
		return "", err
	}
	db := sql.OpenDB(c)
	defer db.Close()
	db.SetMaxOpenConns(1)
	var tables []string
	rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return "", err
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return "", err
		}
		tables = append(tables, name)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, table := range tables {
		rows, err := db.Query(`SELECT * FROM "` + strings.ReplaceAll(table, `"`, `""`) + `"`)
		if err != nil {
			return "", err
		}
		cols, err := rows.Columns()
		if err != nil {
			rows.Close()
			return "", err
		}
		var lines []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return "", err
			}
			lines = append(lines, fmt.Sprintf("%#v", vals))
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return "", err
		}
		slices.Sort(lines)
		fmt.Fprintf(&b, "%s %q: %s\n", table, cols, strings.Join(lines, " "))
	}
	return b.String(), nil
}

// prefix returns lines, each with p before it.
func prefix(p string, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = p + l
	}
	return out
}
