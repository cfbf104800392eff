package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
)

// The protocol between the scenario tests and cmd/lab, which runs them with
// go test and reads what they write: the flags it passes, the line a matrix
// test logs before its cells run, and the files the tests write (WriteAll,
// WriteFinished, Stepper.Write). Both sides name them by these constants.
const (
	// ReportFlag is the test flag naming the file a run writes its
	// reports to, as JSON (WriteAll): -lab.report=FILE. The scenario
	// tests and the exercise checks take it.
	ReportFlag = "lab.report"
	// CellsFlag is the test flag naming the directory a run writes each
	// cell to the moment it finishes (WriteFinished): -lab.cells=DIR.
	CellsFlag = "lab.cells"
	// StepperFlag is the test flag naming the file a run writes the
	// stepper's trees to: -lab.stepper=FILE.
	StepperFlag = "lab.stepper"
	// CellsMarker starts the line a matrix test logs before its cells
	// run, followed by how many there are ("idemlab-cells: 120"): the
	// command counts the cells done against it.
	CellsMarker = "idemlab-cells: "
	// EnvPostgres names the environment variable that points the tests
	// at a PostgreSQL server, as a pgx connection string for a database
	// the lab may connect to as a role allowed to create databases, e.g.
	// postgres:///postgres?host=/var/run/postgresql. Without it the
	// PostgreSQL tests skip, and the command runs no PostgreSQL matrix
	// live.
	EnvPostgres = "IDEMLAB_PG"
	// EnvMariaDB names the environment variable that points the tests at
	// a MariaDB server, as a go-sql-driver/mysql DSN for a user that may
	// create databases and has the PROCESS privilege, e.g.
	// idemlab:idemlab@unix(/run/idemlab-mariadb/mariadbd.sock)/idemlab,
	// which .ci/mariadb-start prints. Without it the MariaDB tests skip,
	// and the command runs no MariaDB matrix live.
	EnvMariaDB = "IDEMLAB_MARIADB"
)

// Finished is one cell as a test writes it the moment the cell finishes
// (go test ./scenarios -lab.cells=DIR), before the run ends and writes the
// whole report: a page that shows the matrix filling in reads these, each
// once go test has said the cell passed or failed.
type Finished struct {
	Backend  string       `json:"backend"`
	Scenario ScenarioInfo `json:"scenario"`
	Variant  string       `json:"variant"`
	Mistake  string       `json:"mistake,omitempty"`
	Cell     *Cell        `json:"cell"`
}

// finishedPath is where the cell of the test named test is written in dir.
func finishedPath(dir, test string) string {
	return filepath.Join(dir, url.PathEscape(test)+".json")
}

// WriteFinished stores f as the cell of the test named test (t.Name()) in
// dir. It writes a temporary file and renames it, so that a reader never
// sees half a cell.
func WriteFinished(dir, test string, f Finished) error {
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".cell-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a failure; renamed, it is gone already
	_, err = tmp.Write(data)
	if err := errors.Join(err, tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), finishedPath(dir, test))
}

// ReadFinished loads the cell WriteFinished stored for the test named
// test; an error wrapping fs.ErrNotExist if there is none (a test that is
// not a cell).
func ReadFinished(dir, test string) (*Finished, error) {
	data, err := os.ReadFile(finishedPath(dir, test))
	if err != nil {
		return nil, err
	}
	f := &Finished{}
	if err := json.Unmarshal(data, f); err != nil {
		return nil, fmt.Errorf("the cell of %s: %w", test, err)
	}
	return f, nil
}

// Add records a finished cell, adding its column or row if the report has
// none yet (a report laid out from an older golden file).
func (rep *Report) Add(f *Finished) {
	if !slices.ContainsFunc(rep.Scenarios, func(s ScenarioInfo) bool { return s.Name == f.Scenario.Name }) {
		rep.Scenarios = append(rep.Scenarios, f.Scenario)
	}
	if !slices.ContainsFunc(rep.Variants, func(v VariantResults) bool { return v.Name == f.Variant }) {
		rep.Variants = append(rep.Variants, VariantResults{Name: f.Variant, Mistake: f.Mistake, Results: map[string]*Cell{}})
	}
	rep.Set(f.Variant, f.Scenario.Name, f.Cell)
}
