package report

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Write stores the report as JSON.
func (rep *Report) Write(path string) error { return writeIndented(path, rep) }

// WriteAll stores several reports in one file, as a JSON array: one go
// test run of ./scenarios can hold the SQLite matrix and a PostgreSQL
// matrix per isolation level, and -lab.report names one file.
func WriteAll(path string, reps []*Report) error { return writeIndented(path, reps) }

// writeIndented stores v at path as indented JSON.
func writeIndented(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// ReadAll loads the reports of a file written by WriteAll, or the one
// report of a file written by Write.
func ReadAll(path string) ([]*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var reps []*Report
	if trimmed := strings.TrimSpace(string(data)); strings.HasPrefix(trimmed, "[") {
		err = json.Unmarshal(data, &reps)
	} else {
		rep := &Report{}
		err = json.Unmarshal(data, rep)
		reps = []*Report{rep}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return reps, nil
}
