package checks_test

import (
	"strings"

	"idemlab/lab/labtest"
)

// ranSQL reports whether a statement of r's transcript, in lower case,
// holds text: a scenario's helper that reads the handler's SQL, kept in a
// file of its own (see the gallery's reads-sql-text-in-a-helper), where
// exercise 11's reading of a scenario's own file does not look.
func ranSQL(r *labtest.Run, text string) bool {
	for _, l := range r.Transcript.Lines() {
		if l.Session != "" && strings.Contains(strings.ToLower(l.Text), text) {
			return true
		}
	}
	return false
}
