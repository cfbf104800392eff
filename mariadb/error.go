package mariadb

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"

	"idemlab/lab"
)

// Error is a MariaDB server error with its number where lab.Classify asks
// for it: the driver's *mysql.MySQLError keeps the number in a field, and
// lab, which every handler imports, asks for a method so as to import no
// driver.
type Error struct {
	// Err is the error as the driver returned it.
	Err error
	// Number is the server's error number: 1213 for a deadlock, say.
	Number uint16
}

// Error returns the driver's message.
func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the driver's error.
func (e *Error) Unwrap() error { return e.Err }

// MySQLNumber returns the server's error number.
func (e *Error) MySQLNumber() uint16 { return e.Number }

// Wrap returns err as an *Error when it holds a *mysql.MySQLError, and err
// unchanged otherwise (nil included).
func Wrap(err error) error {
	var me *mysql.MySQLError
	var done *Error
	if err == nil || errors.As(err, &done) || !errors.As(err, &me) {
		return err
	}
	return &Error{Err: err, Number: me.Number}
}

// Classify is lab.Classify for the error of a statement the MariaDB
// driver ran with ctx. A caller who gave up leaves database/sql to roll
// the transaction back on a goroutine of its own: a statement that loses
// the race with that rollback, COMMIT included, reports only that the
// transaction is already done (sql.ErrTxDone), and the driver answers
// driver.ErrBadConn for a statement it did not send because its context
// was done. Either would read as "other error". The caller's context says
// what happened: the answer is busy.
func Classify(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		err = fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	return lab.Classify(Wrap(err))
}
