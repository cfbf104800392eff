// Package report holds the verdicts of a run of the scenario tests — one
// cell per variant and scenario, with its evidence, transcript and
// interleavings — and renders them as the verdict matrix. The tests write a
// report as JSON and the command reads it, so what a student sees is what
// the tests found, and the command links neither the engine nor a
// database driver.
package report

import "strings"

// Report is what a run of the scenario tests found: one cell per variant and
// scenario. The tests write it (go test ./scenarios -lab.report=FILE) and
// the command renders it, so the matrix a student reads is the one the tests
// produced.
type Report struct {
	// Backend names the database the cells ran on and, on PostgreSQL, the
	// isolation level: SQLite, or PostgresBackend("read committed"). The
	// same variant can hold on one and break on another, so a verdict
	// means nothing without it. "" is SQLite, for reports written before
	// the field existed.
	Backend string `json:"backend,omitempty"`
	// Recorded is set on a report whose verdicts were not run but read
	// back from a golden file (ParseReport): it names that file. Such a
	// report has verdicts only — no evidence, no transcript — and whoever
	// shows it must say that it is a record, not a run.
	Recorded  string           `json:"recorded,omitempty"`
	Scenarios []ScenarioInfo   `json:"scenarios"`
	Variants  []VariantResults `json:"variants"`
}

// ScenarioInfo describes a column.
type ScenarioInfo struct {
	Name   string `json:"name"`
	Short  string `json:"short"`
	Shows  string `json:"shows"`
	Claims string `json:"claims"`
	Limit  string `json:"limit,omitempty"`
}

// VariantResults is a row: one variant's verdicts.
type VariantResults struct {
	Name    string           `json:"name"`
	Mistake string           `json:"mistake,omitempty"`
	Results map[string]*Cell `json:"results"`
}

// SQLite is the Backend of the SQLite matrix.
const SQLite = "SQLite"

// PostgresBackend is the Backend of the PostgreSQL matrix at an isolation
// level spelled as PostgreSQL spells it ("read committed"): "PostgreSQL
// READ COMMITTED".
func PostgresBackend(level string) string { return "PostgreSQL " + strings.ToUpper(level) }

// MariaDBBackend is the Backend of the MariaDB matrix at an isolation
// level spelled as PostgresBackend takes it: "MariaDB READ COMMITTED".
// REPEATABLE READ with innodb_snapshot_isolation adds
// ", innodb_snapshot_isolation".
func MariaDBBackend(level string) string { return "MariaDB " + strings.ToUpper(level) }

// OnServer reports whether the report's cells ran on a database server,
// PostgreSQL or MariaDB, not on SQLite.
func (rep *Report) OnServer() bool { return rep.BackendName() != SQLite }

// BackendName is Backend, with "" read as SQLite.
func (rep *Report) BackendName() string {
	if rep.Backend == "" {
		return SQLite
	}
	return rep.Backend
}

// New returns an empty report with the given columns and rows.
func New(scenarios []ScenarioInfo, variants []VariantResults) *Report {
	rep := &Report{Scenarios: scenarios}
	for _, v := range variants {
		if v.Results == nil {
			v.Results = map[string]*Cell{}
		}
		rep.Variants = append(rep.Variants, v)
	}
	return rep
}

// Set records a verdict.
func (rep *Report) Set(variant, scenario string, c *Cell) {
	for i := range rep.Variants {
		if rep.Variants[i].Name == variant {
			rep.Variants[i].Results[scenario] = c
			return
		}
	}
}

// Cell returns the verdict of variant on scenario, or nil if it was not run.
func (rep *Report) Cell(variant, scenario string) *Cell {
	for _, v := range rep.Variants {
		if v.Name == variant {
			return v.Results[scenario]
		}
	}
	return nil
}

// Complete reports whether every cell has a verdict.
func (rep *Report) Complete() bool {
	for _, v := range rep.Variants {
		for _, s := range rep.Scenarios {
			if v.Results[s.Name] == nil {
				return false
			}
		}
	}
	return true
}

// Backend returns the report of reps that ran on backend (see BackendName),
// or nil.
func Backend(reps []*Report, backend string) *Report {
	for _, rep := range reps {
		if rep.BackendName() == backend {
			return rep
		}
	}
	return nil
}
