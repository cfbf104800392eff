package lab

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The driver's error type must have the method Classify asks for: if a new
// version of modernc.org/sqlite dropped it, every database error would read
// "other error".
var _ sqliteError = (*sqlite.Error)(nil)

// codeError stands for a driver error with an extended result code.
type codeError int

func (c codeError) Error() string { return fmt.Sprintf("sqlite error %d", int(c)) }
func (c codeError) Code() int     { return int(c) }

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{codeError(sqlite3.SQLITE_BUSY), "busy"},
		{codeError(sqlite3.SQLITE_BUSY_RECOVERY), "busy"},
		{codeError(sqlite3.SQLITE_BUSY_SNAPSHOT), "busy"},
		{codeError(sqlite3.SQLITE_BUSY_TIMEOUT), "busy"},
		{codeError(sqlite3.SQLITE_LOCKED), "busy"},
		{codeError(sqlite3.SQLITE_LOCKED_SHAREDCACHE), "busy"},
		{fmt.Errorf("exec: %w", codeError(sqlite3.SQLITE_BUSY)), "busy"},
		{codeError(sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY), "unknown account"},
		{codeError(sqlite3.SQLITE_CONSTRAINT_CHECK), "invalid event"},
		{codeError(sqlite3.SQLITE_CONSTRAINT_NOTNULL), "invalid event"},
		{codeError(sqlite3.SQLITE_CONSTRAINT_DATATYPE), "invalid event"},
		// A key conflict that reaches Classify was not handled by ON
		// CONFLICT: it is no kind the lab can name, and never a duplicate.
		{codeError(sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY), "other error"},
		{codeError(sqlite3.SQLITE_CONSTRAINT_UNIQUE), "other error"},
		{codeError(sqlite3.SQLITE_IOERR), "other error"},
		{codeError(sqlite3.SQLITE_FULL), "other error"},
		{context.DeadlineExceeded, "busy"},
		{context.Canceled, "busy"},
		{errors.New("boom"), "other error"},
	} {
		got := Classify(c.err)
		if kind := ErrorKind(got); kind != c.want {
			t.Errorf("ErrorKind(Classify(%v)) = %q, want %q", c.err, kind, c.want)
		}
		if !errors.Is(got, c.err) {
			t.Errorf("Classify(%v) = %v, which does not wrap the original error", c.err, got)
		}
	}
	once := Classify(codeError(sqlite3.SQLITE_BUSY))
	if twice := Classify(once); twice != once {
		t.Errorf("Classify(Classify(busy)) = %v, want it unchanged: %v", twice, once)
	}
	if got := Classify(nil); got != nil {
		t.Errorf("Classify(nil) = %v, want nil", got)
	}
}
