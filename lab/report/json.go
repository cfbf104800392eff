package report

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Write stores the report as JSON.
func (rep *Report) Write(path string) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// WriteAll stores several reports in one file, as a JSON array: one go
// test run of ./scenarios can hold the SQLite matrix and a PostgreSQL
// matrix per isolation level, and -lab.report names one file.
func WriteAll(path string, reps []*Report) error {
	data, err := json.MarshalIndent(reps, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Read loads a file written by Write, or by WriteAll with one report in it.
func Read(path string) (*Report, error) {
	reps, err := ReadAll(path)
	if err != nil {
		return nil, err
	}
	if len(reps) != 1 {
		return nil, fmt.Errorf("%s holds %d reports, want 1 (read it with ReadAll)", path, len(reps))
	}
	return reps[0], nil
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
