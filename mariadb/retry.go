package mariadb

import (
	"idemlab/lab"
	"idemlab/postgres"
)

// Retry returns h with the retry InnoDB prescribes for a deadlock (1213)
// and, with innodb_snapshot_isolation, a record changed since it was read
// (1020): the whole transaction was rolled back, only because another ran
// beside it, so the delivery is run again from BEGIN — at most 4 times,
// after a short random pause that grows with each attempt
// (postgres.Linear). If every attempt fails, the last error is the answer:
// busy (lab.ErrBusy), never duplicate. A lock wait timeout (1205) is not
// retried: it rolled back only its statement, and the handler's answer,
// busy, leaves the retry to the sender.
//
// On MariaDB the correct handler needs it even for events no one else
// delivers: the inbox row's foreign key share-locks the account, so two
// deliveries of different events for one account, each INSERTing and then
// UPDATEing the account, deadlock, and InnoDB rolls one back.
//
// The loop is postgres's (RetryWith): lab.Retryable already tells which
// errors of either server are retried, so one loop serves both. The policy
// is not postgres.Retry's: BenchmarkRetry measured the policies on
// PostgreSQL only (docs/performance.md), so MariaDB keeps the one its
// goldens and the Galera fleet were measured with.
func Retry(h lab.Processor) lab.Processor { return postgres.RetryWith(h, postgres.Linear) }
