// Package lab is the contract between a webhook handler and the rest of the
// kit: the event and its validation, the key that identifies it, the two
// successful outcomes, the error kinds a handler answers with, Classify,
// which maps a database error to those kinds, the Processor interface every
// handler implements, and the Variant that describes one implementation.
//
// It is all a handler imports, and it imports nothing of the test harness
// and no database driver, so a handler reads, builds and links as
// production code. The engine that runs scenarios against handlers is
// [idemlab/lab/labtest]; the verdict matrix it produces is
// [idemlab/lab/report]. The pair follows net/http and net/http/httptest.
package lab
