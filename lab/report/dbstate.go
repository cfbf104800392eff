package report

// DBState is the database at one node of a stepper's tree, as the engine
// read it (labtest.TraceCell): before a decision, or once every session is
// done at a leaf. It is what a room watches change as it steps: the
// balances and the inbox, who holds SQLite's write lock, what each session
// has read and what its open transaction has written.
type DBState struct {
	// Accounts and Inbox are the committed tables, what another
	// connection reads: a transaction's writes are in them once it has
	// committed, a statement outside a transaction's at once.
	Accounts []AccountState `json:"accounts"`
	Inbox    []InboxRow     `json:"inbox"`
	// Unread, when set, says why the tables could not be read at this
	// node (a COMMIT waiting for the lock keeps every reader out): they
	// are the previous node's, and nothing has committed since.
	Unread string `json:"unread,omitempty"`
	// Writer is the session that holds SQLite's write lock (RESERVED):
	// taken by BEGIN IMMEDIATE or by a transaction's first write, kept
	// until its COMMIT or ROLLBACK. "" when no one holds it.
	Writer string `json:"writer,omitempty"`
	// Readers are the sessions that hold a read lock (SHARED) inside a
	// transaction: a COMMIT must wait until they end theirs.
	Readers []string `json:"readers,omitempty"`
	// Reads is what the sessions have read so far, in order.
	Reads []SessionRead `json:"reads,omitempty"`
	// Pending is what open transactions have written, which no other
	// connection sees until their COMMIT.
	Pending []Write `json:"pending,omitempty"`
}

// AccountState is one account's row, with what exactly once allows of it.
type AccountState struct {
	ID      int64 `json:"id"`
	Balance int64 `json:"balance"`
	// Seed is its balance before the first delivery.
	Seed int64 `json:"seed"`
	// Inbox is the sum of the amounts of its committed inbox rows: with
	// every credit recorded, the balance is Seed + Inbox.
	Inbox int64 `json:"inbox"`
	// Most is the highest balance exactly once allows: Seed and each
	// distinct event the scenario delivers for it, once.
	Most int64 `json:"most"`
}

// Overcredited reports whether the balance is past what exactly once
// allows: an event was credited twice.
func (a AccountState) Overcredited() bool { return a.Balance > a.Most }

// Unrecorded is how much of the balance's move has no inbox row behind
// it; 0 when every credit is recorded.
func (a AccountState) Unrecorded() int64 { return a.Balance - a.Seed - a.Inbox }

// InboxRow is a row of the inbox.
type InboxRow struct {
	Source    string `json:"source"`
	EventID   string `json:"eventId"`
	AccountID int64  `json:"accountId"`
	Amount    int64  `json:"amount"`
}

// SessionRead is a SELECT a session ran and what it got.
type SessionRead struct {
	Session string `json:"session"`
	Step    string `json:"step"` // "A1"
	Table   string `json:"table,omitempty"`
	// Rows is how many rows it returned; First is the first, each value
	// as an SQL literal.
	Rows  int      `json:"rows"`
	First []string `json:"first,omitempty"`
	// Err is the error it got instead, if any.
	Err string `json:"err,omitempty"`
}

// Write is a statement of an open transaction that wrote.
type Write struct {
	Session string `json:"session"`
	Step    string `json:"step"` // "A2"
	Op      string `json:"op"`   // INSERT, UPDATE, DELETE
	Table   string `json:"table"`
	Rows    int64  `json:"rows"`
}

// Account returns the account with id, or nil.
func (s *DBState) Account(id int64) *AccountState {
	if s == nil {
		return nil
	}
	for i := range s.Accounts {
		if s.Accounts[i].ID == id {
			return &s.Accounts[i]
		}
	}
	return nil
}
