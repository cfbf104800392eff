// Package untargeted is package correct with ON CONFLICT DO NOTHING
// without a conflict target.
//
// It is equivalent because on the inbox, whose only uniqueness constraint
// is the primary key (source, event_id), "any conflict" and "a conflict on
// (source, event_id)" are the same thing. ON CONFLICT applies only to
// uniqueness constraints (PRIMARY KEY, UNIQUE): the CHECKs, NOT NULLs and the
// foreign key still refuse a bad row with an error, unlike INSERT OR IGNORE
// (see naive/insertorignore).
//
// Compare: diff -u correct/process.go equivalent/untargeted/process.go
package untargeted
